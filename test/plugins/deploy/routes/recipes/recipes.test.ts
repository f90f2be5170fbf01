// needs: docker
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Http from 'node:http';
import type { AddressInfo } from 'node:net';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import YAML from 'yaml';

import { RecipeError } from '../../../../../plugins/deploy/domain/recipes/recipe-files.ts';
import { recipeProblems } from '../../../../../plugins/deploy/domain/recipes/recipe-files.ts';
import type { Browser } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { createTestServer, temporaryDirectory } from '../../../../helpers/server.ts';
import { type DockerHubStandIn, startDockerHub } from '../../../../support/docker-hub.ts';
import { buildTestImage, docker } from '../../../../support/images.ts';
import { type LocalRegistry, pushImage, startLocalRegistry } from '../../../../support/local-registry.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface RecipeSummary {
    id: string;
    image: string;
    method: string;
    level: string;
    template: boolean;
    origin: { kind: string };
}

interface Evidence {
    method: string;
    level: string;
    sources: Array<{ what: string; url?: string }>;
    flags: { paidOnly: boolean; informationOnly: boolean; recipe?: string };
}

interface Option {
    method: string;
    section: string;
    level: string | null;
    recommended: boolean;
    paidOnly: boolean;
}

/** A Portainer v2 list: one container template whose image has a recipe, one without, and one broken entry. */
const PORTAINER_LIST = JSON.stringify({
    version: '2',
    templates: [
        {
            type: 1,
            title: 'Grafana',
            description: 'Dashboards',
            image: 'grafana/grafana:11.1.0',
            ports: ['3000/tcp'],
            categories: ['Monitoring'],
        },
        { type: 1, title: 'Static site', description: 'A web server', image: 'example/static-site:2' },
        { type: 1, description: 'no title' },
    ],
});

/** A recipe folder for the test: one template recipe (compose with {{IMAGE}} and {{PORT}}). */
const TEMPLATE_RECIPE = [
    'image: example/notes',
    'title: Example notes',
    'description: A note-taking app (a test template)',
    'method: header',
    'level: documented',
    'sources: ["https://example.org/notes"]',
    'compose: |',
    '  services:',
    '    notes:',
    '      image: {{IMAGE}}',
    '      restart: unless-stopped',
    '      ports:',
    '        - "127.0.0.1:{{PORT}}:8080"',
    '',
].join('\n');

describe('deploy manager: recipes, the catalog and the evidence about an image', () => {
    let deploy: DeployTestServer;
    let editor: Browser;
    let viewer: Browser;
    let listServer: Http.Server;
    let recipeDir: string;
    let listFile: string;
    let registry: LocalRegistry;
    let labelledImage = '';

    before(async () => {
        listServer = Http.createServer((request, response) => {
            response.writeHead(request.url === '/templates.json' ? 200 : 404, { 'content-type': 'application/json' });
            response.end(request.url === '/templates.json' ? PORTAINER_LIST : '{}');
        });
        await new Promise<void>((resolve) => listServer.listen(0, '127.0.0.1', resolve));
        const listUrl = `http://127.0.0.1:${(listServer.address() as AddressInfo).port}/templates.json`;
        recipeDir = temporaryDirectory('gatehouse-recipes-');
        Fs.writeFileSync(Path.join(recipeDir, 'example-notes.yaml'), TEMPLATE_RECIPE);
        listFile = Path.join(recipeDir, 'legacy.json');
        Fs.writeFileSync(listFile, JSON.stringify([{ type: 'container', title: 'Legacy app', image: 'example/legacy:1' }]));
        registry = await startLocalRegistry();
        // Built before the server starts: a build blocks this process for a while. Its name has a part of its own, as
        // the Docker engine is shared with other runs.
        labelledImage = `${registry.host}/team/labelled-${Crypto.randomBytes(3).toString('hex')}`;
        buildTestImage(
            `${labelledImage}:1.0`,
            {
                lines: [
                    'LABEL org.opencontainers.image.description="A board for teams. Sign in with OpenID Connect."',
                    'LABEL org.opencontainers.image.documentation="https://docs.example.org/guides/saml/"',
                    'LABEL org.opencontainers.image.source="https://git.example.org/team/labelled"',
                ],
            },
            true,
        );
        await pushImage(registry, 'team/portal', '1.0', {
            architecture: 'amd64',
            os: 'linux',
            config: {
                Env: ['PATH=/bin', 'OIDC_ISSUER_URL=', 'PORTAL_TRUSTED_HEADER=Remote-User'],
                Labels: { 'org.opencontainers.image.description': 'A portal. Sign in with SAML 2.0 or LDAP.' },
            },
            rootfs: { type: 'layers', diff_ids: [] },
        });
        deploy = await deployTestServer({
            RECIPES_DIRS: recipeDir,
            CATALOG_URLS: `${listUrl},${listFile},http://127.0.0.1:1/missing.json`,
            // Docker Hub's registry is not reachable from the tests: a closed loopback port stands for it.
            HUB_URL: 'http://127.0.0.1:9',
            HUB_REGISTRY_URL: 'http://127.0.0.1:9',
            // The local registry stands for one on the internet.
            HUB_ALLOWED_HOST_LIST: 'loopback',
        });
        editor = await deploy.signInAs('editor');
        viewer = await deploy.signInAs('viewer');
    });

    after(async () => {
        await deploy?.context.cleanup();
        if (labelledImage) {
            docker('image', 'rm', '-f', `${labelledImage}:1.0`);
        }

        listServer?.close();
        await registry?.stop();
        Fs.rmSync(recipeDir, { recursive: true, force: true });
    });

    it('lists the shipped recipes (at least 20, each valid) and the extra folder', async () => {
        const answer = await viewer.get('/api/recipes');
        expect(answer.status).to.equal(200);
        const list = (answer.body as { recipes: RecipeSummary[] }).recipes;
        expect(list.length).to.be.at.least(21);
        expect(list.map((recipe) => recipe.id)).to.include(['gitea', 'grafana', 'example-notes']);
        expect(list.find((recipe) => recipe.id === 'example-notes')?.template).to.equal(true);
        for (const recipe of list) {
            expect(['oidc', 'saml', 'header', 'none', 'basic', 'autologin', 'own']).to.include(recipe.method);
        }
    });

    it('exports a recipe as a file that reads back as the same recipe', async () => {
        const answer = await viewer.get('/api/recipes/grafana');
        expect(answer.status).to.equal(200);
        expect(answer.headers.get('content-type')).to.match(/^application\/yaml/);
        const fields = YAML.parse(answer.text) as { image: string; method: string };
        expect(recipeProblems(fields)).to.equal([]);
        expect(fields.image).to.equal('grafana/grafana');
        expect(fields.method).to.equal('oidc');
        expect((await viewer.get('/api/recipes/no-such-recipe')).status).to.equal(404);
        expect((await viewer.get('/api/recipes/Bad..id')).status).to.equal(422);
    });

    it('answers the evidence for an image, best first, with levels, sources and flags', async () => {
        const answer = await editor.get('/api/sso/detect?image=docker.io/grafana/grafana:11.1.0');
        expect(answer.status).to.equal(200);
        const detection = answer.body as { recipe: { id: string; match: string }; app: string; evidence: Evidence[] };
        expect(detection.recipe).to.include({ id: 'grafana', match: 'exact' });
        expect(detection.app).to.equal('Grafana');
        const [first] = detection.evidence;
        expect(first?.method).to.equal('oidc');
        expect(first?.level).to.equal('documented');
        expect(first?.flags.recipe).to.equal('grafana');
        const whats = first?.sources.map((source) => source.what) ?? [];
        expect(whats.some((what) => what.startsWith('recipe grafana'))).to.equal(true);
        expect(whats.some((what) => what.startsWith('curated list'))).to.equal(true);
        expect(whats.some((what) => what.startsWith('authentik integration guide'))).to.equal(true);
        // SAML is in Grafana's paid edition only: flagged, and after every free method.
        const saml = detection.evidence.find((item) => item.method === 'saml');
        expect(saml?.flags.paidOnly).to.equal(true);
        const free = detection.evidence.filter((item) => !item.flags.paidOnly && !item.flags.informationOnly);
        expect(detection.evidence.indexOf(saml as Evidence)).to.be.above(detection.evidence.indexOf(free[free.length - 1] as Evidence));
        expect(detection.evidence.find((item) => item.method === 'ldap')?.flags.informationOnly).to.equal(true);
    });

    it("adds what the image's own configuration says (found), read from its registry in at most 2 round trips per level", async () => {
        const image = `${registry.host}/team/portal:1.0`;
        const first = (await editor.get(`/api/sso/detect?image=${encodeURIComponent(image)}`)).body as {
            recipe: unknown;
            evidence: Evidence[];
            inspection: { ok: boolean; roundTrips: number };
        };
        expect(first.recipe).to.equal(null);
        expect(first.inspection.ok).to.equal(true);
        // One manifest level (no index) and its config: at most 2 requests each.
        expect(first.inspection.roundTrips).to.be.between(1, 4);
        const methods = first.evidence.map((item) => [item.method, item.level]);
        expect(methods).to.include([
            ['oidc', 'found'],
            ['saml', 'found'],
            ['header', 'found'],
        ]);
        expect(first.evidence.find((item) => item.method === 'oidc')?.sources[0]?.what).to.contain('OIDC_ISSUER_URL');
        expect(first.evidence.find((item) => item.method === 'ldap')?.flags.informationOnly).to.equal(true);

        const again = (await editor.get(`/api/sso/detect?image=${encodeURIComponent(image)}`)).body as {
            inspection: { roundTrips: number };
        };
        expect(again.inspection.roundTrips).to.be.at.most(1);
    });

    it("answers the other evidence when the image's registry does not answer", async () => {
        const detection = (await editor.get('/api/sso/detect?image=grafana/grafana')).body as {
            inspection: { ok: boolean; error: string };
            evidence: Evidence[];
        };
        expect(detection.inspection.ok).to.equal(false);
        expect(detection.inspection.error).to.contain('unreachable');
        expect(detection.evidence[0]?.method).to.equal('oidc');
    });

    it('matches mirrors, and finds nothing for an image nobody documents', async () => {
        const mirror = (await editor.get('/api/sso/detect?image=lscr.io/linuxserver/bookstack:latest')).body as { recipe: { id: string } };
        expect(mirror.recipe.id).to.equal('bookstack');
        const unknown = (await editor.get('/api/sso/detect?image=example/nothing-known')).body as { recipe: unknown; evidence: unknown[] };
        expect(unknown.recipe).to.equal(null);
        expect(unknown.evidence).to.equal([]);
        expect((await editor.get('/api/sso/detect')).status).to.equal(422);
        expect((await viewer.get('/api/sso/detect?image=grafana/grafana')).status).to.equal(403);
    });

    it("orders an app's account list as the seed does: evidence first, the rest behind more, own login apart", async () => {
        const created = await editor.post('/api/apps', { name: 'dash', image: 'grafana/grafana', tag: '11.1.0' });
        expect(created.status).to.equal(201);
        const shown = (await editor.get('/api/apps/dash')).body as {
            app: { identity: { method: string; recipe: { id: string }; options: Option[] } };
        };
        const identity = shown.app.identity;
        expect(identity.method).to.equal('oidc');
        expect(identity.recipe.id).to.equal('grafana');
        const sections = identity.options.map((option) => option.section);
        expect(identity.options[0]).to.include({ method: 'oidc', section: 'evidence', level: 'documented' });
        expect(sections[sections.length - 1]).to.equal('own');
        expect(sections.indexOf('more')).to.be.above(sections.lastIndexOf('evidence'));
        // Grafana has single sign-on, so the shared account is not offered as the last resort.
        expect(sections).to.not.include('last-resort');

        await editor.post('/api/apps', { name: 'plain', image: 'example/nothing-known' });
        const plain = (await editor.get('/api/apps/plain')).body as { app: { identity: { method: string; options: Option[] } } };
        expect(plain.app.identity.method).to.equal('');
        expect(plain.app.identity.options.find((option) => option.method === 'autologin')?.section).to.equal('last-resort');
        expect(plain.app.identity.options.filter((option) => option.section === 'evidence')).to.equal([]);
    });

    it('keeps a method paid-only when a source that says nothing about editions speaks for it too', async () => {
        const detection = (await editor.get('/api/sso/detect?image=mattermost/mattermost-team-edition')).body as { evidence: Evidence[] };
        const saml = detection.evidence.find((item) => item.method === 'saml');
        // The recipe and the curated list say paid only; authentik's integration guide names SAML without an edition.
        expect(saml?.sources.some((source) => source.what.startsWith('authentik integration guide'))).to.equal(true);
        expect(saml?.flags.paidOnly).to.equal(true);
        expect(detection.evidence.find((item) => item.method === 'oidc')?.flags.paidOnly).to.equal(false);

        expect((await editor.post('/api/apps', { name: 'chat', image: 'mattermost/mattermost-team-edition' })).status).to.equal(201);
        const shown = (await editor.get('/api/apps/chat')).body as { app: { identity: { options: Option[] } } };
        expect(shown.app.identity.options.find((option) => option.method === 'saml')).to.include({ paidOnly: true, recommended: false });
    });

    it('puts auto-login behind "more" when a single sign-on method is known, even when a source names it', async () => {
        const detection = (await editor.get('/api/sso/detect?image=gitea/gitea')).body as { evidence: Evidence[] };
        expect(detection.evidence.map((item) => item.method)).to.include(['oidc', 'autologin']);
        expect((await editor.post('/api/apps', { name: 'forge', image: 'gitea/gitea' })).status).to.equal(201);
        const shown = (await editor.get('/api/apps/forge')).body as { app: { identity: { options: Option[] } } };
        const options = shown.app.identity.options;
        expect(options.find((option) => option.method === 'autologin')?.section).to.equal('more');
        expect(options.filter((option) => option.section === 'evidence').map((option) => option.method)).to.include(['oidc', 'header']);
        expect(options.map((option) => option.section)).to.not.include('last-resort');
    });

    it("does not take another project's recipe for an image that only shares its name (bitwarden/server)", async () => {
        const detection = (await editor.get('/api/sso/detect?image=bitwarden/server')).body as { recipe: unknown; app: unknown };
        expect(detection.recipe).to.equal(null);
        expect(detection.app).to.equal(null);
        const vaultwarden = (await editor.get('/api/sso/detect?image=vaultwarden/server')).body as { recipe: { id: string } };
        expect(vaultwarden.recipe.id).to.equal('vaultwarden');
    });

    it("reads an image's OCI labels from its registry, and offers what they name in the app's main list", async () => {
        const image = labelledImage;
        const detection = (await editor.get(`/api/sso/detect?image=${encodeURIComponent(`${image}:1.0`)}`)).body as {
            evidence: Evidence[];
            inspection: { ok: boolean };
        };
        expect(detection.inspection.ok).to.equal(true);
        const oidc = detection.evidence.find((item) => item.method === 'oidc');
        expect(oidc?.level).to.equal('found');
        expect(oidc?.sources[0]?.what).to.equal('image label: Sign in with OpenID Connect.');
        expect(detection.evidence.find((item) => item.method === 'saml')?.sources[0]?.what).to.contain('docs.example.org/guides/saml');

        expect((await editor.post('/api/apps', { name: 'labelled', image, tag: '1.0' })).status).to.equal(201);
        const shown = (await editor.get('/api/apps/labelled')).body as { app: { identity: { options: Option[] } } };
        expect(shown.app.identity.options.find((option) => option.method === 'oidc')).to.include({ section: 'evidence', level: 'found' });
        expect(shown.app.identity.options.find((option) => option.method === 'autologin')?.section).to.equal('more');
    });

    it('lists the catalog: template recipes, then the imported lists matched to recipes; a broken list is reported', async () => {
        const answer = await viewer.get('/api/catalog');
        expect(answer.status).to.equal(200);
        const catalog = answer.body as {
            templates: Array<{ id: string; title: string; image: string; method: string | null; recipe: string | null; source: string }>;
            sources: Array<{ source: string; templates: number; skipped: number; error: string | null }>;
        };
        expect(catalog.templates.find((template) => template.id === 'example-notes')).to.include({ method: 'header', source: 'recipes' });
        // The shipped recipes come first (each has a template); an imported entry of the same app keeps its place beside them.
        expect(catalog.templates.find((template) => template.title === 'Grafana')).to.include({ id: 'grafana', source: 'recipes' });
        const grafana = catalog.templates.find((template) => template.title === 'Grafana' && template.source !== 'recipes');
        expect(grafana).to.include({ image: 'grafana/grafana:11.1.0', method: 'oidc', recipe: 'grafana' });
        expect(catalog.templates.find((template) => template.title === 'Static site')?.method).to.equal(null);
        expect(catalog.templates.find((template) => template.title === 'Legacy app')?.image).to.equal('example/legacy:1');
        expect(catalog.sources.find((source) => source.source.endsWith('/templates.json'))).to.include({
            templates: 2,
            skipped: 1,
            error: null,
        });
        expect(catalog.sources.find((source) => source.source.includes('missing'))?.error).to.be.a.string();
    });

    it('makes a draft from a template: a recipe template fills its compose file, an imported one gives image and tag', async () => {
        const notes = await editor.post('/api/apps', { name: 'notes', templateId: 'example-notes' });
        expect(notes.status).to.equal(201);
        const app = (notes.body as { app: { image: string; templateId: string; hostPort: number; draft: { compose: string } } }).app;
        expect(app.templateId).to.equal('example-notes');
        expect(app.draft.compose).to.contain(`image: example/notes:latest`);
        expect(app.draft.compose).to.contain(`127.0.0.1:${app.hostPort}:8080`);

        const catalog = (await viewer.get('/api/catalog')).body as { templates: Array<{ id: string; title: string }> };
        const grafanaId = catalog.templates.find((template) => template.title === 'Grafana' && template.id !== 'grafana')?.id ?? '';
        const dash = await editor.post('/api/apps', { name: 'dash2', templateId: grafanaId });
        expect(dash.status).to.equal(201);
        expect((dash.body as { app: { image: string; tag: string } }).app).to.include({ image: 'grafana/grafana', tag: '11.1.0' });
        expect((await editor.post('/api/apps', { name: 'nope', templateId: 'no-such-template' })).status).to.equal(422);
    });

    it('saves a recipe only from a running app that signs in', async () => {
        // An app of its own that was never deployed.
        expect((await editor.post('/api/apps', { name: 'idle', image: 'grafana/grafana', tag: '11.1.0' })).status).to.equal(201);
        const answer = await editor.post('/api/apps/idle/recipe', { keys: [] });
        expect(answer.status).to.equal(422);
        expect((answer.body as { error: string }).error).to.contain('save a recipe from a working one');
        expect((await editor.post('/api/apps/idle/recipe', { keys: ['bad key'] })).status).to.equal(422);
        expect((await viewer.post('/api/apps/idle/recipe', { keys: [] })).status).to.equal(403);
    });
});

describe("deploy manager: the evidence from an image's Docker Hub page", () => {
    let deploy: DeployTestServer;
    let hubStandIn: DockerHubStandIn;

    before(async () => {
        hubStandIn = await startDockerHub();
        deploy = await deployTestServer({ HUB_URL: hubStandIn.url, HUB_REGISTRY_URL: 'http://127.0.0.1:9' });
    });

    after(async () => {
        await deploy?.context.cleanup();
        await hubStandIn?.stop();
    });

    it('reads the description and README Docker Hub keeps, even when the image itself cannot be read', async () => {
        const detection = (await deploy.admin.get('/api/sso/detect?image=nginx:1.27')).body as {
            evidence: Evidence[];
            inspection: { ok: boolean };
        };
        expect(detection.inspection.ok).to.equal(false);
        const found = detection.evidence.filter((item) => item.level === 'found').map((item) => item.method);
        expect(found).to.include(['basic', 'header']);
        const basic = detection.evidence.find((item) => item.method === 'basic');
        expect(basic?.sources[0]?.what).to.match(/^image readme: .*HTTP Basic/);
        expect(hubStandIn.requests.map((request) => request.path)).to.include('/v2/repositories/library/nginx/');
    });

    it("offers a method only the image's README names in the app's main list, with its found-in-docs level", async () => {
        expect((await deploy.admin.post('/api/apps', { name: 'proxy', image: 'nginx', tag: '1.27' })).status).to.equal(201);
        const shown = (await deploy.admin.get('/api/apps/proxy')).body as { app: { identity: { options: Option[] } } };
        const basic = shown.app.identity.options.find((option) => option.method === 'basic');
        expect(basic).to.include({ section: 'evidence', level: 'found', recommended: false });
        expect((basic as Option & { sources: Array<{ what: string }> }).sources[0]?.what).to.match(/^image readme: /);
    });
});

describe('deploy manager: a recipe file that is not valid stops the start', () => {
    const cases: Array<[string, string, RegExp]> = [
        [
            'bad-method.yaml',
            'image: a/b\ntitle: B\nmethod: magic\nlevel: documented\nsources: ["https://example.org/"]\n',
            // The methods there are, as plugins/sso/methods/ has them.
            /bad-method\.yaml: method: must be equal to one of the allowed values: autologin, basic, header, none, oidc, own, saml$/,
        ],
        [
            'bad-field.yaml',
            'image: a/b\ntitle: B\nmethod: oidc\nlevel: documented\nsources: ["https://example.org/"]\ncolour: red\n',
            /bad-field\.yaml: \(the recipe\): must NOT have additional properties \(colour\)/,
        ],
        [
            'bad-placeholder.yaml',
            'image: a/b\ntitle: B\nmethod: oidc\nlevel: documented\nsources: ["https://example.org/"]\nenv:\n  X: "{{SECRET}}"\n',
            /bad-placeholder\.yaml: env\.X: unknown placeholder \{\{SECRET\}\}/,
        ],
        [
            'own-door.yaml',
            'image: a/b\ntitle: B\nmethod: header\nlevel: documented\nsources: ["https://example.org/"]\nownDoor: true\n',
            /own-door\.yaml: ownDoor: only an oidc recipe can leave forward auth out/,
        ],
        [
            'open-acs.yaml',
            'image: a/b\ntitle: B\nmethod: saml\nlevel: documented\nsources: ["https://example.org/"]\nsamlAcs: /\n',
            /open-acs\.yaml: samlAcs: must be the path of the app's assertion consumer service alone/,
        ],
        [
            'climbing-acs.yaml',
            'image: a/b\ntitle: B\nmethod: saml\nlevel: documented\nsources: ["https://example.org/"]\nsamlAcs: /saml/../admin\n',
            /climbing-acs\.yaml: samlAcs: must be (the|a) path/,
        ],
        [
            'bad-image.yaml',
            'image: a//b:latest\ntitle: B\nmethod: oidc\nlevel: documented\nsources: ["https://example.org/"]\n',
            /bad-image\.yaml: image: /,
        ],
        [
            'bad-template.yaml',
            'image: a/b\ntitle: B\nmethod: oidc\nlevel: documented\nsources: ["https://example.org/"]\ncompose: "services: [unclosed"\n',
            /bad-template\.yaml: compose: not YAML/,
        ],
        ['Bad_Name.yaml', 'image: a/b\n', /Bad_Name\.yaml: the file name must be <id>\.yaml/],
        ['not-yaml.yaml', 'image: [unclosed\n', /not-yaml\.yaml: not YAML/],
        [
            'gitea.yaml',
            'image: a/b\ntitle: B\nmethod: oidc\nlevel: documented\nsources: ["https://example.org/"]\n',
            /gitea\.yaml: recipe gitea is also .*recipes\/gitea\.yaml/,
        ],
    ];

    for (const [file, text, message] of cases) {
        it(`refuses ${file}`, async () => {
            const folder = temporaryDirectory('gatehouse-recipes-');
            try {
                Fs.writeFileSync(Path.join(folder, file), text);
                const error = await expect(createTestServer({ RECIPES_DIRS: folder })).to.reject(RecipeError);
                expect(error.message).to.match(message);
            } finally {
                Fs.rmSync(folder, { recursive: true, force: true });
            }
        });
    }
});
