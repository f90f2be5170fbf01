import Fs from 'node:fs';
import Net from 'node:net';
import Os from 'node:os';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import YAML from 'yaml';

import { loadConfig } from '../../../../../lib/config.ts';
import { ValidationError } from '../../../../../lib/errors.ts';
import type { ComposeSpec } from '../../../../../plugins/deploy/domain/compose/compose-types.ts';
import type { Finding } from '../../../../../plugins/deploy/domain/findings/finding.ts';
import {
    hasUnacceptedRisks,
    lintCompose,
    lintContextFor,
    parseCompose,
    renderCompose,
    validateCompose,
} from '../../../../../plugins/deploy/domain/compose/compose-model.ts';
import { modelFromJson } from '../../../../../plugins/deploy/domain/compose/compose-read.ts';
import { ROOT_DIR } from '../../../../../server.ts';
import { freePort } from '../../../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const FIXTURES = Path.join(ROOT_DIR, 'test', 'fixtures', 'compose');
const FILES = Fs.readdirSync(FIXTURES)
    .filter((file) => file.endsWith('.yaml'))
    .sort();

function fixture(name: string): string {
    return Fs.readFileSync(Path.join(FIXTURES, name), 'utf8');
}

/** A value for every variable a file names, so that only what is under test can fail. */
function secretsFor(text: string): Record<string, string> {
    return Object.fromEntries([...text.matchAll(/\$\{([A-Za-z_]\w*)/g)].map((match) => [match[1], 'a-value']));
}

function parseError(text: string): ValidationError {
    try {
        parseCompose(text);
    } catch (error) {
        expect(error).to.be.an.instanceof(ValidationError);
        return error as ValidationError;
    }

    throw new Error('parseCompose accepted the text');
}

function brief(findings: Finding[]): string[][] {
    return findings.map((finding) => [finding.level, finding.path]);
}

async function listenOn(port: number): Promise<Net.Server> {
    const server = Net.createServer();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return server;
}

describe('compose model: round trips of real-world files', () => {
    it('has 20 real-world fixtures', () => {
        expect(FILES.length).to.equal(20);
    });

    for (const file of FILES) {
        it(`${file}: parse, render and parse again give an equal model, and the text is stable after the first render`, async () => {
            const text = fixture(file);
            const spec = parseCompose(text);
            const rendered = renderCompose(spec);
            const again = parseCompose(rendered);
            expect(again).to.equal(spec);
            expect(renderCompose(again)).to.equal(rendered);
            expect(modelFromJson(JSON.parse(JSON.stringify(spec)))).to.equal(spec);
            expect(await validateCompose(spec, { secrets: secretsFor(text), checkHostPorts: false })).to.equal([]);
        });
    }

    it('gives environment back in the form it was written, with names without a value kept as such', () => {
        const listed = parseCompose(fixture('08-env-list.yaml')).services.app;
        expect(listed?.environmentForm).to.equal('list');
        expect(listed?.environment).to.include({ EMPTY_VALUE: '', FROM_SHELL: null, EQUALS_INSIDE: 'a=b=c', QUOTED: '"keep the quotes"' });
        const rendered = YAML.parse(renderCompose(parseCompose(fixture('08-env-list.yaml')))) as {
            services: { app: { environment: unknown } };
        };
        expect(rendered.services.app.environment).to.include(['FROM_SHELL', 'EMPTY_VALUE=', 'EQUALS_INSIDE=a=b=c']);

        const mapped = parseCompose(fixture('09-env-map-and-file.yaml')).services.app;
        expect(mapped?.environmentForm).to.equal('map');
        expect(mapped?.environment).to.include({
            WORKERS: '4',
            RATIO: '0.75',
            FEATURE_X: 'true',
            FROM_SHELL: null,
            EMPTY: '',
            LOOKS_LIKE_NUMBER: '0123',
        });
        expect(mapped?.env_file).to.equal([
            { path: './default.env', required: true },
            { path: './override.env', required: false },
        ]);
    });

    it('keeps what the model does not cover verbatim: x- extensions, unknown service keys, secrets and configs', () => {
        const extended = parseCompose(fixture('10-x-extensions.yaml'));
        expect(extended.extra?.['x-notes']).to.equal({ owner: 'ops', reviewed: '2024-01-10' });
        expect(extended.services.sonarr?.extra).to.equal({ 'x-backup': true });
        // Merge keys are resolved: each service has the shared settings of its own.
        expect(extended.services.sonarr?.restart).to.equal('unless-stopped');
        expect(extended.services.radarr?.environment).to.equal({ TZ: 'UTC', PUID: '1000', EXTRA: '1' });
        expect(extended.services.radarr?.logging).to.equal({ driver: 'json-file', options: { 'max-size': '10m', 'max-file': '3' } });

        const secrets = parseCompose(fixture('12-secrets-configs.yaml'));
        expect(secrets.extra?.secrets).to.equal({
            db_password: { file: './secrets/db_password.txt' },
            api_token: { environment: 'API_TOKEN' },
        });
        expect(secrets.extra?.configs).to.equal({
            pg_conf: { file: './postgresql.conf' },
            motd: { content: 'Welcome to the invoices app\n' },
        });
        expect(secrets.services.app?.extra?.deploy).to.equal({ resources: { limits: { cpus: '0.50', memory: '512M' } } });
        // 0440 is octal, as Compose reads it.
        expect(secrets.services.app?.extra?.secrets).to.equal([{ source: 'db_password', target: 'db_password', mode: 0o440 }, 'api_token']);
        expect(parseCompose(fixture('11-profiles.yaml')).services.debug?.extra).to.equal({ profiles: ['debug', 'tools'] });
    });

    it('reads long-syntax ports and volumes, and depends_on with conditions', () => {
        const spec = parseCompose(fixture('07-long-syntax.yaml'));
        expect(spec.services.proxy?.ports?.[0]).to.equal({
            name: 'web',
            target: 80,
            published: '8081',
            host_ip: '127.0.0.1',
            protocol: 'tcp',
            mode: 'host',
        });
        expect(spec.services.proxy?.volumes?.[1]).to.equal({
            type: 'volume',
            source: 'caddy_data',
            target: '/data',
            volume: { nocopy: true },
        });
        expect(spec.volumes?.caddy_data).to.equal({ external: true });
        const health = parseCompose(fixture('05-healthchecks.yaml'));
        expect(health.services.api?.depends_on).to.equal({
            cache: { condition: 'service_healthy' },
            migrate: { condition: 'service_completed_successfully', required: true },
        });
        expect(health.services.migrate?.restart).to.equal('no');
    });

    it('quotes strings that YAML 1.1 readers would take for something else', () => {
        const spec: ComposeSpec = {
            services: { app: { image: 'x:1', restart: 'no', environment: { FLAG: 'yes', TIME: '22:22' }, environmentForm: 'map' } },
        };
        const text = renderCompose(spec);
        expect(text).to.contain('restart: "no"');
        expect(text).to.contain('FLAG: "yes"');
        expect(text).to.contain('TIME: "22:22"');
        expect(YAML.parse(text, { version: '1.1' })).to.equal(YAML.parse(text));
    });
});

describe('compose model: parse errors', () => {
    it('names the line of a YAML syntax error', () => {
        const error = parseError('services:\n  web:\n    image: [nginx\n');
        expect(error.statusCode).to.equal(422);
        expect(error.message).to.match(/^line \d+, column \d+: /);
    });

    it('names the path and the line of a value of the wrong type', () => {
        expect(parseError('services:\n  web:\n    image: nginx:1\n    ports:\n      published: 80\n').message).to.equal(
            'services.web.ports (line 5): must be a list',
        );
        expect(parseError('services:\n  web:\n    image: nginx:1\n    environment:\n      - A=1\n      - [B]\n').message).to.equal(
            'services.web.environment[1] (line 6): must be a string',
        );
        expect(parseError('services:\n  web:\n    depends_on:\n      db: {condition: service_ready}\n').message).to.match(
            /^services\.web\.depends_on\.db\.condition \(line 4\): must be one of service_started/,
        );
        expect(parseError('services:\n  web:\n    ports:\n      - {published: 80}\n').message).to.match(
            /^services\.web\.ports\[0\]\.target: is required/,
        );
        expect(parseError('name: x\n').message).to.match(/^services: is required/);
        expect(parseError('- a\n- b\n').message).to.match(/must be a mapping/);
        expect(parseError('').message).to.equal('the compose file is empty');
    });

    it('refuses a model given as JSON with the path of the mistake', () => {
        const refuse = (value: unknown) => expect(() => modelFromJson(value)).to.throw(ValidationError);
        refuse({ services: { web: { ports: 'x' } } });
        refuse({ services: { web: { build: '.' } } });
        refuse({ services: { web: { extra: { image: 'x' } } } });
        refuse({ services: { web: { environment: { A: 1 }, environmentForm: 'yaml' } } });
        expect(() => modelFromJson({ services: { web: { healthcheck: { retries: 'three' } } } })).to.throw(
            ValidationError,
            'services.web.healthcheck.retries: must be a number',
        );
    });
});

describe('compose model: validation', () => {
    it('reports schema errors with their path', async () => {
        const text = [
            'servics: {}',
            'services:',
            '  web:',
            '    image: nginx:1.25',
            '    restart_policy: always',
            '    mem_limit: [1g]',
            '    ports: ["80:80:80:80x"]',
            '    healthcheck: {test: [CMD, "true"], interval: 10 seconds}',
            '    volumes: [{type: bind, source: ./a, target: /a, mode: ro}]',
            '  "bad name!":',
            '    image: nginx:1.25',
        ].join('\n');
        const findings = await validateCompose(parseCompose(text), { checkHostPorts: false });
        expect(findings.every((finding) => finding.level === 'error')).to.be.true();
        expect(findings.map((finding) => finding.path).sort()).to.equal(
            [
                'servics',
                'services.web.restart_policy',
                'services.web.mem_limit',
                'services.web.ports[0]',
                'services.web.healthcheck.interval',
                'services.web.volumes[0].mode',
                'services["bad name!"]',
            ].sort(),
        );
        const interval = findings.find((finding) => finding.path === 'services.web.healthcheck.interval');
        expect(interval).to.include({ service: 'web', field: 'healthcheck' });
        expect(interval?.message).to.equal('services.web.healthcheck.interval: must match format "duration"');
    });

    it('reports ${VAR}s that are neither in the secrets nor defaulted', async () => {
        const text = [
            'services:',
            '  web:',
            '    image: "ghcr.io/example/web:${TAG:-1.0}"',
            '    environment:',
            '      DB_PASSWORD: ${DB_PASSWORD}',
            '      API_URL: $API_URL',
            '      GIVEN: ${GIVEN}',
            '      PRICE: $$5',
            '      OPTIONAL: ${OPTIONAL-}',
            '      NEEDED: ${NEEDED:?set NEEDED in the secrets file}',
            '      BROKEN: pa$5word',
            '      NESTED: ${FIRST:-${SECOND}}',
        ].join('\n');
        const findings = await validateCompose(parseCompose(text), { secrets: { GIVEN: 'yes' }, checkHostPorts: false });
        expect(findings.map((finding) => [finding.path, finding.message])).to.equal([
            ['services.web.environment.DB_PASSWORD', '${DB_PASSWORD} has no value: it is not in the secrets file and has no default'],
            ['services.web.environment.API_URL', '${API_URL} has no value: it is not in the secrets file and has no default'],
            ['services.web.environment.NEEDED', '${NEEDED} is required: set NEEDED in the secrets file'],
            ['services.web.environment.BROKEN', 'invalid interpolation at character 3'],
            ['services.web.environment.NESTED', '${SECOND} has no value: it is not in the secrets file and has no default'],
        ]);
        const withSecrets = { DB_PASSWORD: 'x', API_URL: 'x', GIVEN: 'x', NEEDED: 'x', FIRST: 'x' };
        const fixed = text.replace('pa$5word', () => 'pa$$5word');
        expect(await validateCompose(parseCompose(fixed), { secrets: withSecrets, checkHostPorts: false })).to.equal([]);
    });

    it('reports host ports already in use, on loopback or every interface, and passes free ones', async () => {
        const busy = await listenOn(0);
        const busyPort = (busy.address() as Net.AddressInfo).port;
        const free = await freePort();
        try {
            const text = [
                'services:',
                '  web:',
                '    image: nginx:1.25',
                '    ports:',
                `      - "127.0.0.1:${busyPort}:80"`,
                `      - "127.0.0.1:${free}:81"`,
                `      - {target: 82, published: "\${WEB_PORT}", host_ip: 127.0.0.1}`,
                '      - "83"',
            ].join('\n');
            const findings = await validateCompose(parseCompose(text), { secrets: { WEB_PORT: String(busyPort) } });
            expect(findings.map((finding) => [finding.path, finding.message])).to.equal([
                ['services.web.ports[0]', `host port ${busyPort} is already in use`],
                ['services.web.ports[2]', `host port ${busyPort} is already in use`],
            ]);
            expect(await validateCompose(parseCompose(text), { secrets: { WEB_PORT: String(busyPort) }, checkHostPorts: false })).to.equal(
                [],
            );
        } finally {
            busy.close();
        }
    });

    it('reports services, volumes and networks that are referred to but not declared', async () => {
        const text = [
            'services:',
            '  web:',
            '    image: nginx:1.25',
            '    depends_on: [db]',
            '    volumes: ["data:/data", "./site:/site", "/tmp/anonymous"]',
            '    networks: [default, backend]',
        ].join('\n');
        const findings = await validateCompose(parseCompose(text), { checkHostPorts: false });
        expect(findings.map((finding) => finding.path)).to.equal([
            'services.web.depends_on.db',
            'services.web.volumes[0]',
            'services.web.networks.backend',
        ]);
    });

    it('skips the image check silently when no Docker engine is reachable', async () => {
        const text = 'services:\n  web:\n    image: example.invalid/does-not-exist:0.0.0\n';
        const dockerHost = process.env.DOCKER_HOST;
        process.env.DOCKER_HOST = `unix://${Path.join(Os.tmpdir(), 'gatehouse-no-engine.sock')}`;
        try {
            expect(await validateCompose(parseCompose(text), { checkHostPorts: false })).to.equal([]);
        } finally {
            if (dockerHost === undefined) {
                delete process.env.DOCKER_HOST;
            } else {
                process.env.DOCKER_HOST = dockerHost;
            }
        }
    });
});

const LINT_CASES: Array<{ file: string; findings: string[][] }> = [
    { file: 'privileged.yaml', findings: [['risk', 'services.app.privileged']] },
    { file: 'network-host.yaml', findings: [['risk', 'services.app.network_mode']] },
    { file: 'pid-host.yaml', findings: [['risk', 'services.app.pid']] },
    { file: 'capabilities.yaml', findings: [['risk', 'services.app.cap_add[1]']] },
    {
        file: 'docker-socket.yaml',
        findings: [
            ['risk', 'services.app.volumes[1]'],
            ['risk', 'services.app.volumes[2]'],
        ],
    },
    {
        file: 'all-interfaces.yaml',
        findings: [
            ['risk', 'services.app.ports[0]'],
            ['risk', 'services.app.ports[1]'],
            ['risk', 'services.app.ports[2]'],
            ['risk', 'services.app.ports[3]'],
        ],
    },
    {
        file: 'sensitive-paths.yaml',
        findings: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((index) => ['risk', `services.app.volumes[${index}]`]),
    },
    {
        file: 'latest-tag.yaml',
        findings: [
            ['warning', 'services.app.image'],
            ['warning', 'services.worker.image'],
        ],
    },
    { file: 'no-healthcheck.yaml', findings: [['warning', 'services.app.healthcheck']] },
    { file: 'no-restart.yaml', findings: [['warning', 'services.app.restart']] },
    {
        file: 'inline-secret-map.yaml',
        findings: [
            ['warning', 'services.app.environment.DB_PASSWORD'],
            ['warning', 'services.app.environment.API_KEY'],
            ['warning', 'services.app.environment.GITHUB_TOKEN'],
        ],
    },
    { file: 'inline-secret-list.yaml', findings: [['warning', 'services.app.environment.ADMIN_PASSWORD']] },
    { file: 'no-volumes.yaml', findings: [['info', 'services.app.volumes']] },
    { file: 'depends-on-list.yaml', findings: [['info', 'services.app.depends_on']] },
];

/** A Gatehouse whose data folder is nowhere near the fixtures' paths. */
const LINT_CONTEXT = lintContextFor(loadConfig({ DATA_DIR: Path.join(Os.tmpdir(), 'gatehouse-lint-fixtures') }), { app: 'app' });

function lint(text: string): Finding[] {
    return lintCompose(parseCompose(text), LINT_CONTEXT);
}

describe('compose model: lint', () => {
    it('finds nothing in a clean file', () => {
        expect(lint(fixture('lint/clean.yaml'))).to.equal([]);
    });

    for (const { file, findings } of LINT_CASES) {
        it(`fires on lint/${file}, and only there`, () => {
            const found = lint(fixture(`lint/${file}`));
            expect(brief(found)).to.equal(findings);
            for (const finding of found) {
                expect(finding.service).to.exist();
                expect(finding.field).to.exist();
                expect(finding.message.length).to.be.above(10);
                expect(finding.fix ?? '').to.not.be.empty();
            }
        });
    }

    it('names the service and the field, and suggests the fix', () => {
        const [finding] = lint(fixture('lint/all-interfaces.yaml'));
        expect(finding).to.equal({
            path: 'services.app.ports[0]',
            level: 'risk',
            message: 'app publishes 8080 on every interface, reachable without the proxy and its sign-in',
            service: 'app',
            field: 'ports',
            fix: 'publish on 127.0.0.1 only: "127.0.0.1:8080:8080"',
        });
    });

    it('tells whether findings hold risks that need accepting', () => {
        expect(hasUnacceptedRisks(lint(fixture('lint/privileged.yaml')))).to.be.true();
        expect(hasUnacceptedRisks(lint(fixture('lint/no-restart.yaml')))).to.be.false();
        expect(hasUnacceptedRisks([])).to.be.false();
    });
});
