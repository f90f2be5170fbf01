import Crypto from 'node:crypto';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { fillYamlPlaceholders } from '../../../../../lib/placeholder-fill.ts';
import { neededVariables, templateSecretKind } from '../../../../../plugins/deploy/domain/catalog/template-secrets.ts';
import { describePort } from '../../../../../plugins/deploy/domain/compose/compose-entries.ts';
import { lintCompose, lintContextFor, parseCompose } from '../../../../../plugins/deploy/domain/compose/compose-model.ts';
import { plainFromModel } from '../../../../../plugins/deploy/domain/compose/compose-read.ts';
import { schemaFindings } from '../../../../../plugins/deploy/domain/compose/compose-schema.ts';
import type { ComposeSpec } from '../../../../../plugins/deploy/domain/compose/compose-types.ts';
import { composeWithRecipe, mainService } from '../../../../../plugins/deploy/domain/recipes/recipe-compose.ts';
import { readRecipeFolders, SHIPPED_RECIPES_DIR } from '../../../../../plugins/deploy/domain/recipes/recipe-files.ts';
import type { Recipe } from '../../../../../plugins/deploy/domain/recipes/recipe-types.ts';
import { apps } from '../../../../../plugins/deploy/domain/apps/app-service.ts';
import { PLACEHOLDER_NAMES } from '../../../../../plugins/sso/placeholders.ts';
import type { Browser } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface CatalogEntry {
    id: string;
    title: string;
    description: string;
    category: string | null;
    categories: string[];
    image: string | null;
    method: string | null;
    level: string | null;
    recipe: string | null;
    source: string;
}

const HOST_PORT = 18_123;
/** A value for every placeholder a run fills, as a run would give them. */
const RUN_VALUES: Record<string, string> = {
    ...Object.fromEntries(PLACEHOLDER_NAMES.map((name) => [name, `value-of-${name.toLowerCase()}`])),
    URL: 'https://app.example.test',
    FQDN: 'app.example.test',
    GATEWAY: '172.30.0.1',
};

const shipped = readRecipeFolders([SHIPPED_RECIPES_DIR]);

/** The template as an app made from it gets it: image and port filled, and the run's placeholders too. */
function filledTemplate(recipe: Recipe): { text: string; spec: ComposeSpec } {
    const draft = fillYamlPlaceholders(recipe.compose ?? '', {
        IMAGE: `${recipe.image}:${recipe.tag ?? 'latest'}`,
        PORT: String(HOST_PORT),
    });
    const text = fillYamlPlaceholders(composeWithRecipe(draft.text, recipe).text, RUN_VALUES).text;
    return { text, spec: parseCompose(text) };
}

describe('deploy manager: the catalog on a fresh install', () => {
    let deploy: DeployTestServer;
    let editor: Browser;

    before(async () => {
        deploy = await deployTestServer({ HUB_URL: 'http://127.0.0.1:9', HUB_REGISTRY_URL: 'http://127.0.0.1:9' });
        editor = await deploy.signInAs('editor');
    });

    after(async () => {
        await deploy?.context.cleanup();
    });

    it('ships a compose template and a category with every recipe', () => {
        expect(shipped.length).to.be.at.least(43);
        for (const recipe of shipped) {
            expect(recipe.compose, recipe.id).to.be.a.string();
            expect(recipe.category, recipe.id).to.be.a.string();
            // The documentation it was written from is named in the template and among the recipe's sources.
            const link = /^# Written from the app's own documentation: (\S+)$/m.exec(recipe.compose ?? '')?.[1];
            expect(link, recipe.id).to.be.a.string();
            expect(recipe.sources, recipe.id).to.include(link as string);
        }
    });

    it('lists one template per recipe with title, description, category, image, method and level', async () => {
        const answer = await editor.get('/api/catalog');
        expect(answer.status, answer.text).to.equal(200);
        const body = answer.body as {
            templates: CatalogEntry[];
            sources: Array<{ source: string; templates: number; skipped: number; error: string | null }>;
        };
        const own = body.templates.filter((entry) => entry.source === 'recipes');
        expect(own.map((entry) => entry.id).sort()).to.equal(shipped.map((recipe) => recipe.id).sort());
        expect(body.sources).to.equal([{ source: 'recipes', templates: shipped.length, skipped: 0, error: null }]);
        for (const entry of own) {
            const recipe = shipped.find((candidate) => candidate.id === entry.id) as Recipe;
            expect(entry).to.include({
                title: recipe.title,
                description: recipe.description ?? '',
                category: recipe.category as string,
                image: `${recipe.image}:${recipe.tag ?? 'latest'}`,
                method: recipe.method,
                level: recipe.level,
                recipe: recipe.id,
            });
            expect(entry.title.length, entry.id).to.be.above(0);
            expect(entry.description.length, entry.id).to.be.above(0);
            expect(entry.categories).to.equal([recipe.category as string]);
        }

        const grafana = own.find((entry) => entry.id === 'grafana');
        expect(grafana).to.include({ category: 'Monitoring', method: 'oidc' });
    });

    it('has templates that parse, fit the Compose schema and pass the lint without a risk, with the recipe applied', () => {
        const context = lintContextFor(deploy.context.config, { app: 'catalog-app' });
        for (const recipe of shipped) {
            const { spec } = filledTemplate(recipe);
            expect(schemaFindings(plainFromModel(spec)), recipe.id).to.equal([]);
            const values = Object.fromEntries(neededVariables(spec).map((name) => [name, 'generated']));
            const findings = lintCompose(spec, { ...context, values });
            const stopping = findings.filter((finding) => finding.level === 'risk' || finding.level === 'error');
            expect(stopping, `${recipe.id}: ${JSON.stringify(stopping)}`).to.equal([]);

            // The recipe's image runs in one service, which publishes the app's port on loopback and nothing else does.
            const main = mainService(spec, recipe);
            expect(main, recipe.id).to.be.a.string();
            const published = Object.entries(spec.services).flatMap(([name, service]) =>
                (service.ports ?? []).map((port) => ({ name, ...describePort(port) })),
            );
            expect(published, recipe.id).to.have.length(1);
            expect(published[0], recipe.id).to.include({ name: main, hostIp: '127.0.0.1', published: String(HOST_PORT) });
            expect(spec.services[main as string]?.image, recipe.id).to.equal(`${recipe.image}:${recipe.tag ?? 'latest'}`);
            for (const [name, service] of Object.entries(spec.services)) {
                expect(service.restart, `${recipe.id} ${name}`).to.equal('unless-stopped');
            }
        }
    });

    it("makes an app from a catalog entry: the template's compose file, its tag, and its secrets generated", async () => {
        const catalog = (await editor.get('/api/catalog')).body as { templates: CatalogEntry[] };
        const immich = catalog.templates.find((entry) => entry.id === 'immich') as CatalogEntry;
        const name = `photos-${Crypto.randomBytes(3).toString('hex')}`;
        const created = await editor.post('/api/apps', { name, templateId: immich.id });
        expect(created.status, created.text).to.equal(201);
        const app = (
            created.body as { app: { templateId: string; image: string; tag: string; hostPort: number; draft: { compose: string } } }
        ).app;
        expect(app).to.include({ templateId: 'immich', image: 'ghcr.io/immich-app/immich-server', tag: 'release' });
        expect(app.draft.compose).to.contain('image: ghcr.io/immich-app/immich-server:release');
        expect(app.draft.compose).to.contain(`127.0.0.1:${app.hostPort}:2283`);
        expect(app.draft.compose).to.contain('image: ghcr.io/immich-app/postgres:14-vectorchord0.4.3-pgvectors0.2.0');

        // The database password the template names is generated and sealed with the app's secrets; a viewer sees it masked.
        const secrets = await apps(deploy.context.server).secretsOf(name);
        expect(Object.keys(secrets)).to.equal(['DB_PASSWORD']);
        expect(secrets.DB_PASSWORD).to.match(/^[0-9a-f]{64}$/);
        const viewer = await deploy.signInAs('viewer');
        const shown = await viewer.get(`/api/apps/${name}`);
        expect((shown.body as { app: { draft: { secrets: Record<string, string> } } }).app.draft.secrets).to.equal({
            DB_PASSWORD: '••••••••',
        });
        expect(shown.text).to.not.contain(secrets.DB_PASSWORD as string);

        // A tag the person chose wins over the template's.
        const pinned = await editor.post('/api/apps', { name: `${name}-2`, templateId: 'immich', tag: 'v1.140.0' });
        expect(pinned.status, pinned.text).to.equal(201);
        expect((pinned.body as { app: { draft: { compose: string } } }).app.draft.compose).to.contain(
            'image: ghcr.io/immich-app/immich-server:v1.140.0',
        );
    });

    it('generates 32 characters for a Laravel key and leaves an app without variables without secrets', async () => {
        expect(templateSecretKind('APP_KEY_HEX16')).to.equal('hex16');
        const books = `books-${Crypto.randomBytes(3).toString('hex')}`;
        expect((await editor.post('/api/apps', { name: books, templateId: 'bookstack' })).status).to.equal(201);
        const secrets = await apps(deploy.context.server).secretsOf(books);
        expect(Object.keys(secrets).sort()).to.equal(['APP_KEY_HEX16', 'DB_PASSWORD', 'DB_ROOT_PASSWORD']);
        expect(secrets.APP_KEY_HEX16).to.match(/^[0-9a-f]{32}$/);

        const grafana = `dash-${Crypto.randomBytes(3).toString('hex')}`;
        const created = await editor.post('/api/apps', { name: grafana, templateId: 'grafana' });
        expect(created.status, created.text).to.equal(201);
        expect(await apps(deploy.context.server).secretsOf(grafana)).to.equal({});
        const compose = (created.body as { app: { draft: { compose: string } } }).app.draft.compose;
        expect(compose).to.contain('grafana-storage:/var/lib/grafana');
    });
});
