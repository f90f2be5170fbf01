import Fs from 'node:fs';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import {
    type CatalogTemplate,
    MAX_CATALOG_BYTES,
    MAX_CATALOG_TEMPLATES,
    parsePortainerTemplates,
    sourceSlug,
} from '../../../../../plugins/deploy/domain/catalog/portainer-templates.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const FIXTURES = new URL('../../../../fixtures/catalog/', import.meta.url);

function fixture(name: string): string {
    return Fs.readFileSync(new URL(name, FIXTURES), 'utf8');
}

function byTitle(templates: CatalogTemplate[], title: string): CatalogTemplate[] {
    return templates.filter((template) => template.title === title);
}

/** The one template with this title. */
function only(templates: CatalogTemplate[], title: string): CatalogTemplate {
    const found = byTitle(templates, title);
    expect(found.length, title).to.equal(1);
    return found[0] as CatalogTemplate;
}

/** Parses a list of entries written inline, in a v2 file. */
function parseEntries(entries: unknown[]) {
    return parsePortainerTemplates(JSON.stringify({ version: '2', templates: entries }), 'inline');
}

describe('catalog: Portainer App Templates v2', () => {
    const source = 'https://raw.githubusercontent.com/portainer/templates/master/templates-2.0.json';
    const { templates, skipped } = parsePortainerTemplates(fixture('portainer-v2.json'), source);
    const slug = sourceSlug(source);

    it('reads a container template whole, with its id from the source and its position', () => {
        expect(only(templates, 'Registry')).to.equal({
            id: `${slug}-0`,
            title: 'Registry',
            description: 'Docker image registry',
            image: 'registry:latest',
            composeUrl: null,
            ports: ['5000/tcp'],
            env: [],
            volumes: ['/var/lib/registry'],
            categories: ['docker'],
            logo: 'https://portainer-io-assets.sfo2.digitaloceanspaces.com/logos/registry.png',
            type: 'container',
            source,
        });
    });

    it('reads inputs: a label, the legacy preset value (`set`) as the default', () => {
        expect(only(templates, 'SQL Server').env).to.equal([
            { name: 'ACCEPT_EULA', default: 'Y' },
            { name: 'SA_PASSWORD', label: 'SA password' },
        ]);
        expect(only(templates, 'Joomla').env).to.equal([
            { name: 'JOOMLA_DB_HOST', label: 'MySQL database host' },
            { name: 'JOOMLA_DB_PASSWORD', label: 'Database password' },
        ]);
    });

    it('writes volumes in compose short syntax, read-only binds with :ro, and prefixes the named registry', () => {
        const datadog = only(templates, 'Datadog agent');
        expect(datadog.volumes).to.equal(['/var/run/docker.sock:/var/run/docker.sock:ro', '/proc:/host/proc']);
        expect(datadog.image).to.equal('gcr.io/datadog/agent:latest');
        expect(datadog.ports).to.equal([]);
    });

    it('reads stacks: swarm (2) and compose (3) from a repository at its default branch, edge (4) from its own URL', () => {
        expect(only(templates, 'Portainer Agent')).to.include({
            type: 'swarm-stack',
            image: null,
            composeUrl: 'https://raw.githubusercontent.com/portainer/templates/HEAD/stacks/portainer-agent/docker-stack.yml',
            ports: [],
            volumes: [],
            categories: ['portainer'],
        });
        const wordpress = only(templates, 'Wordpress');
        expect(wordpress).to.include({
            type: 'compose-stack',
            composeUrl: 'https://raw.githubusercontent.com/portainer/templates/HEAD/stacks/wordpress/docker-compose.yml',
            logo: null,
        });
        expect(wordpress.env).to.equal([{ name: 'MYSQL_DATABASE_PASSWORD', label: 'Database root password' }]);
        expect(only(templates, 'CockroachDB')).to.include({
            type: 'edge-stack',
            composeUrl: 'https://raw.githubusercontent.com/portainer/templates/master/stacks/cockroachdb/edge/docker-stack.yml',
        });
    });

    it('skips each broken entry with its position and reason, and reads the rest', () => {
        expect(skipped).to.equal([
            { index: 7, reason: 'no title' },
            { index: 8, reason: 'container template without an image' },
            { index: 9, reason: 'stack template without a stack file (repository.url and repository.stackfile, or a stackfile URL)' },
            { index: 10, reason: 'unknown type 7' },
            { index: 11, reason: 'not an object but the string "not a template"' },
        ]);
        expect(templates.map((template) => template.id.slice(slug.length + 1))).to.equal(['0', '1', '2', '3', '4', '5', '6', '12']);
    });

    it('smooths the quirks of third-party lists: empty host ports, bad ports, unsafe logos, repeats', () => {
        const heimdall = only(templates, 'Heimdall');
        expect(heimdall.ports).to.equal(['80/tcp', '8443:443/tcp']);
        expect(heimdall.volumes).to.equal(['/portainer/Files/AppData/Config/heimdall:/config']);
        expect(heimdall.logo).to.equal(null);
        expect(heimdall.categories).to.equal(['Dashboard', 'Tools']);
        expect(heimdall.env).to.equal([
            { name: 'PUID', label: 'PUID', default: '1000' },
            { name: 'TZ', label: 'Timezone', default: 'Europe/London' },
        ]);
    });
});

describe('catalog: Portainer App Templates v3', () => {
    const { templates, skipped } = parsePortainerTemplates(fixture('portainer-v3.json'), 'Portainer official');

    it('takes ids from the templates, and the position for one without', () => {
        expect(templates.map((template) => template.id)).to.equal([
            'portainer-official-1',
            'portainer-official-2',
            'portainer-official-17',
            'portainer-official-18',
            'portainer-official-5',
            'portainer-official-22',
        ]);
        expect(only(templates, 'No id').id).to.equal('portainer-official-5');
    });

    it('uses a select input default option and a preset default', () => {
        expect(only(templates, 'SQL Server').env).to.equal([
            { name: 'ACCEPT_EULA', label: 'Accept EULA', default: 'Y' },
            { name: 'MSSQL_PID', label: 'Edition', default: 'Express' },
            { name: 'SA_PASSWORD', label: 'SA password' },
        ]);
    });

    it('builds raw URLs for GitHub (".git" and "./" dropped) and GitLab, and joins the path for other hosts', () => {
        const [compose, swarm] = byTitle(templates, 'Wordpress');
        expect(compose?.composeUrl).to.equal(
            'https://raw.githubusercontent.com/portainer/templates/HEAD/stacks/wordpress/docker-compose.yml',
        );
        expect(swarm?.composeUrl).to.equal('https://gitlab.com/example/stacks/-/raw/HEAD/wordpress/docker-stack.yml');
        expect(only(templates, 'Self-hosted git').composeUrl).to.equal('https://git.example.org/team/stacks/apps/my%20app/compose.yaml');
    });

    it('skips a repeated id, a repository that is not http(s) and a stack file path that leaves the repository', () => {
        expect(skipped).to.equal([
            { index: 4, reason: 'duplicate id "portainer-official-17" (already used by the template at index 2)' },
            { index: 6, reason: 'repository URL "git@github.com:example/stacks.git" is not an http(s) URL' },
            { index: 7, reason: 'stack file path "../../secrets/docker-compose.yml" is not a path inside the repository' },
        ]);
    });
});

describe('catalog: legacy Portainer template arrays', () => {
    it('reads 1.x: string types, container paths given as strings, "stack" as a Swarm stack', () => {
        const { templates, skipped } = parsePortainerTemplates(fixture('portainer-legacy-1x.json'), 'legacy');
        expect(templates.map((template) => [template.id, template.title, template.type])).to.equal([
            ['legacy-0', 'Registry', 'container'],
            ['legacy-1', 'NextCloud', 'container'],
            ['legacy-2', 'OpenFaaS', 'swarm-stack'],
        ]);
        expect(only(templates, 'NextCloud')).to.include({ volumes: ['/data', '/config'], ports: ['8888/tcp'] });
        expect(only(templates, 'NextCloud').env).to.equal([
            { name: 'DB_TYPE', default: 'mysql' },
            { name: 'DB_NAME', default: 'nextcloud' },
        ]);
        expect(only(templates, 'OpenFaaS').composeUrl).to.equal('https://raw.githubusercontent.com/openfaas/faas/HEAD/docker-compose.yml');
        expect(skipped).to.equal([
            { index: 3, reason: 'stack template without a stack file (repository.url and repository.stackfile, or a stackfile URL)' },
            { index: 4, reason: 'unknown type "application"' },
        ]);
    });

    it('reads 1.20: integer types in a bare array', () => {
        const { templates, skipped } = parsePortainerTemplates(fixture('portainer-1.20.json'), 'legacy 1.20');
        expect(templates.map((template) => [template.id, template.type])).to.equal([
            ['legacy-1-20-0', 'container'],
            ['legacy-1-20-1', 'swarm-stack'],
            ['legacy-1-20-2', 'compose-stack'],
        ]);
        expect(only(templates, 'Nginx').volumes).to.equal(['/etc/nginx', '/usr/share/nginx/html']);
        expect(skipped).to.equal([{ index: 3, reason: 'no title' }]);
    });
});

describe('catalog: Portainer template fields read leniently', () => {
    it('skips a container template whose image is no Docker reference (a tag with a line break, spaces, upper case)', () => {
        const list = [
            { type: 1, title: 'Split tag', image: 'example/split:1\n    privileged: true' },
            { type: 1, title: 'Spaced', image: 'example/app name' },
            { type: 1, title: 'Upper', image: 'Example/App:1' },
            { type: 1, title: 'Registry', image: 'app:1.2', registry: 'quay.io' },
        ];
        const { templates, skipped } = parsePortainerTemplates(JSON.stringify(list), 'images');
        expect(templates.map((template) => template.image)).to.equal(['quay.io/app:1.2']);
        expect(skipped.map((entry) => entry.index)).to.equal([0, 1, 2]);
        expect(skipped[0]?.reason).to.contain('is not an image reference: the tag');
    });

    it('matches field names without regard to case, as Portainer does (Id, Title, stackFile)', () => {
        const { templates } = parsePortainerTemplates(
            JSON.stringify({
                Version: '3',
                Templates: [{ Id: 9, Type: 4, Title: 'Edge', stackFile: 'https://example.com/edge.yml', Env: [{ Name: 'A', Default: 1 }] }],
            }),
            'cased',
        );
        expect(templates).to.have.length(1);
        expect(templates[0]).to.include({ id: 'cased-9', type: 'edge-stack', composeUrl: 'https://example.com/edge.yml' });
        expect(templates[0]?.env).to.equal([{ name: 'A', default: '1' }]);
    });

    it('reads types given as digit strings, and infers a missing type from the content', () => {
        const { templates, skipped } = parseEntries([
            { type: '3', title: 'Quoted', repository: { url: 'https://github.com/a/b', stackfile: 'c.yml' } },
            { title: 'Image only', image: 'nginx' },
            { title: 'Repository only', repository: { url: 'https://github.com/a/b', stackfile: 'c.yml' } },
            { title: 'Nothing' },
            { type: { kind: 1 }, title: 'Object type', image: 'nginx' },
        ]);
        expect(templates.map((template) => [template.title, template.type])).to.equal([
            ['Quoted', 'compose-stack'],
            ['Image only', 'container'],
            ['Repository only', 'compose-stack'],
        ]);
        expect(skipped).to.equal([
            { index: 3, reason: 'no type, and neither an image nor a stack file' },
            { index: 4, reason: 'unknown type an object' },
        ]);
    });

    it('skips an Edge template whose URL is not http(s), and a stack that names only a path', () => {
        const { skipped } = parseEntries([
            { type: 4, title: 'File URL', stackfile: 'file:///etc/passwd' },
            { type: 3, title: 'Path only', repository: { stackfile: 'docker-compose.yml' } },
        ]);
        expect(skipped).to.equal([
            { index: 0, reason: 'stack file URL "file:///etc/passwd" is not an http(s) URL' },
            { index: 1, reason: 'stack template without a stack file (repository.url and repository.stackfile, or a stackfile URL)' },
        ]);
    });

    it('quotes a long value in a reason only in part', () => {
        const { skipped } = parseEntries([{ type: 'x'.repeat(500), title: 'Long type', image: 'nginx' }]);
        expect(skipped[0]?.reason).to.equal(`unknown type "${'x'.repeat(60)}…"`);
    });

    it('keeps the image of a registry that is already named in it', () => {
        const { templates } = parseEntries([{ type: 1, title: 'Quay', registry: 'quay.io/', image: 'quay.io/prometheus/node-exporter' }]);
        expect(templates[0]?.image).to.equal('quay.io/prometheus/node-exporter');
    });

    it('reads a file that starts with a byte order mark', () => {
        const { templates } = parsePortainerTemplates(`\uFEFF${JSON.stringify([{ type: 1, title: 'BOM', image: 'nginx' }])}`, 'bom');
        expect(templates.map((template) => template.title)).to.equal(['BOM']);
    });
});

describe('catalog: Portainer template files that are not read', () => {
    const cases: Array<{ name: string; text: string; message: string }> = [
        { name: 'invalid JSON', text: '{"version": "2", "templates": [', message: 'Portainer templates from list.json: not valid JSON (' },
        {
            name: 'a string root',
            text: '"templates"',
            message: 'Portainer templates from list.json: the file holds the string "templates", not a template list',
        },
        { name: 'a null root', text: 'null', message: 'Portainer templates from list.json: the file holds null, not a template list' },
        {
            name: 'no templates array',
            text: '{"version": "2", "templates": {}}',
            message: 'Portainer templates from list.json: the root object has no "templates" array',
        },
        {
            name: 'an unknown version',
            text: '{"version": "4", "templates": []}',
            message: 'Portainer templates from list.json: unsupported version "4" (versions 2 and 3 are read)',
        },
        {
            name: 'a file over 5 MB',
            text: `[${' '.repeat(MAX_CATALOG_BYTES)}]`,
            message: 'Portainer templates from list.json: the file is larger than 5 MB',
        },
        {
            name: 'a file over 5 MB in bytes though not in characters',
            text: JSON.stringify([{ title: 'é'.repeat(MAX_CATALOG_BYTES / 2) }]),
            message: 'Portainer templates from list.json: the file is larger than 5 MB',
        },
    ];

    for (const { name, text, message } of cases) {
        it(`is an error naming the source and the problem: ${name}`, () => {
            expect(() => parsePortainerTemplates(text, 'list.json')).to.throw(Error, new RegExp(`^${escapeRegExp(message)}`));
        });
    }

    it('reads an empty list, and a list without a version', () => {
        expect(parsePortainerTemplates('[]', 'empty')).to.equal({ templates: [], skipped: [] });
        expect(parsePortainerTemplates('{"templates": []}', 'empty')).to.equal({ templates: [], skipped: [] });
        expect(parsePortainerTemplates('{"version": "2.0", "templates": []}', 'empty')).to.equal({ templates: [], skipped: [] });
    });

    it(`reads at most ${MAX_CATALOG_TEMPLATES} templates and says how many more were not`, () => {
        const entries = Array.from({ length: MAX_CATALOG_TEMPLATES + 3 }, (_, index) => ({
            type: 1,
            title: `App ${index}`,
            image: 'nginx',
        }));
        const { templates, skipped } = parseEntries(entries);
        expect(templates).to.have.length(MAX_CATALOG_TEMPLATES);
        expect(templates.at(-1)?.title).to.equal(`App ${MAX_CATALOG_TEMPLATES - 1}`);
        expect(skipped).to.equal([
            { index: MAX_CATALOG_TEMPLATES, reason: `3 more templates not read: at most ${MAX_CATALOG_TEMPLATES} are` },
        ]);
    });
});

describe('catalog: source slugs', () => {
    it('are lowercase letters, digits and dashes, short, stable, and differ for different long sources', () => {
        expect(sourceSlug('Portainer official')).to.equal('portainer-official');
        expect(sourceSlug('https://example.com/templates.json')).to.equal('example-com-templates-json');
        expect(sourceSlug('!!!')).to.match(/^source-[0-9a-f]{8}$/);
        const long = 'https://raw.githubusercontent.com/Lissy93/portainer-templates/main/templates.json';
        const other = 'https://raw.githubusercontent.com/Lissy94/portainer-templates/main/templates.json';
        expect(sourceSlug(long)).to.match(/^[a-z0-9-]{1,48}$/);
        expect(sourceSlug(long)).to.match(/-templates-main-templates-json-[0-9a-f]{8}$/);
        expect(sourceSlug(long)).to.equal(sourceSlug(long));
        expect(sourceSlug(long)).to.not.equal(sourceSlug(other));
    });
});

function escapeRegExp(text: string): string {
    return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
