import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { loadConfig } from '../../../../../lib/config.ts';
import type { Finding } from '../../../../../plugins/deploy/domain/findings/finding.ts';
import {
    hasUnacceptedRisks,
    lintCompose,
    lintContextFor,
    type LintContext,
    parseCompose,
} from '../../../../../plugins/deploy/domain/compose/compose-model.ts';
import { ROOT_DIR } from '../../../../../server.ts';
import type { Browser } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

function fixture(name: string): string {
    return Fs.readFileSync(Path.join(ROOT_DIR, 'test', 'fixtures', 'compose', 'lint', name), 'utf8');
}

function brief(findings: Finding[]): string[][] {
    return findings.map((finding) => [finding.level, finding.path]);
}

const risks = (...paths: string[]) => paths.map((path) => ['risk', path]);
const warnings = (...paths: string[]) => paths.map((path) => ['warning', path]);

/** What each fixture must find (and nothing else) for an app named app, in <root>/apps/app; its data in <root>/data. */
const HOST_CASES: Array<{ file: string; findings: string[][] }> = [
    {
        file: 'relative-paths.yaml',
        findings: [...risks('services.app.volumes[2]', 'services.app.volumes[3]'), ...warnings('services.app.volumes[4]')],
    },
    { file: 'unnormalised-paths.yaml', findings: risks(...[0, 1, 2, 3, 4, 5].map((index) => `services.app.volumes[${index}]`)) },
    { file: 'variables.yaml', findings: risks('services.app.volumes[0]', 'services.app.volumes[1]', 'services.app.volumes[3]') },
    { file: 'gatehouse-places.yaml', findings: risks(...[0, 1, 2, 3, 4, 5, 6, 7].map((index) => `services.app.volumes[${index}]`)) },
    {
        file: 'outside-app-folder.yaml',
        findings: warnings('services.app.volumes[0]', 'services.app.volumes[1]', 'services.app.volumes[3]'),
    },
    {
        file: 'env-files.yaml',
        findings: risks('services.app.env_file[1]', 'services.app.env_file[2]', 'services.app.env_file[3]', 'services.worker.env_file'),
    },
    {
        file: 'build-contexts.yaml',
        findings: [...risks('services.app.build.context'), ...warnings('services.app.build.additional_contexts.source')],
    },
    {
        file: 'top-level-paths.yaml',
        findings: [
            ...risks(
                'volumes.host-etc.driver_opts.device',
                'volumes.other-apps.driver_opts.device',
                'volumes.disk.driver_opts.device',
                'secrets.gatehouse_key.file',
                'configs.nginx.file',
            ),
            ...warnings('volumes.shared', 'volumes.other-db', 'networks.shared-net'),
        ],
    },
];

const PRIVILEGE_CASES: Array<{ file: string; findings: string[][] }> = [
    {
        file: 'capabilities-escape.yaml',
        findings: [
            ...risks(...[2, 3, 4, 5, 6, 7, 8].map((index) => `services.app.cap_add[${index}]`)),
            ...warnings('services.app.cap_add[9]', 'services.app.cap_add[10]'),
        ],
    },
    {
        file: 'namespaces.yaml',
        findings: [
            ...risks('services.app.network_mode', 'services.app.pid', 'services.app.ipc', 'services.app.userns_mode'),
            ...warnings('services.app.cgroup', 'services.app.uts'),
            ...risks('services.app.volumes_from[1]', 'services.worker.ipc'),
            ...warnings('services.cache.network_mode'),
        ],
    },
    {
        file: 'confinement.yaml',
        findings: [
            ...risks(...[1, 2, 3, 4].map((index) => `services.app.security_opt[${index}]`)),
            ...warnings('services.app.security_opt[5]', 'services.app.devices[0]', 'services.app.devices[1]'),
            ...risks('services.app.devices[2]', 'services.app.devices[3]', 'services.app.device_cgroup_rules'),
        ],
    },
];

describe('compose lint: host paths as the deploy resolves them', () => {
    let root: string;
    let context: (values?: Record<string, string>) => LintContext;
    const values = { HOST_ROOT: '/', SOCKET_DIR: '/var/run', APP_DATA: './data', GATEHOUSE_CODE: ROOT_DIR };

    before(() => {
        root = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'gatehouse-lint-'));
        const config = loadConfig({
            DATA_DIR: Path.join(root, 'data'),
            APPS_DIR: Path.join(root, 'apps'),
            CERTIFICATES_DIR: Path.join(root, 'certs'),
        });
        context = (given = values) => lintContextFor(config, { app: 'app', values: given });
    });

    after(() => {
        Fs.rmSync(root, { recursive: true, force: true });
    });

    for (const { file, findings } of [...HOST_CASES, ...PRIVILEGE_CASES]) {
        it(`fires on lint/${file}, and only there`, () => {
            const found = lintCompose(parseCompose(fixture(file)), context());
            expect(brief(found)).to.equal(findings);
            for (const finding of found) {
                expect(finding.message.length).to.be.above(10);
                expect(finding.fix ?? '').to.not.be.empty();
            }
        });
    }

    it("judges the deploy: keys a swarm reads: replicas that would share a node's host port, and placement on managers", () => {
        const swarmFile = (deploy: string, ports = '[{target: 80, published: 8001, host_ip: 127.0.0.1, mode: host}]') =>
            ['services:', '  web:', '    image: web:1.0', `    ports: ${ports}`, `    deploy: ${deploy}`, ''].join('\n');
        const swarmFindings = (text: string) =>
            brief(lintCompose(parseCompose(text), context()).filter((finding) => /replicas|manager/.test(finding.message)));
        expect(swarmFindings(swarmFile('{replicas: 2}'))).to.equal(warnings('services.web.ports[0]'));
        const [shared] = lintCompose(parseCompose(swarmFile('{replicas: 3}')), context()).filter((finding) =>
            finding.message.includes('replicas'),
        );
        expect(shared?.message).to.equal(
            '3 replicas publish port 8001 in host mode: two on one node cannot both bind it, and the second never starts',
        );
        expect(swarmFindings(swarmFile('{replicas: 2, placement: {max_replicas_per_node: 1}}'))).to.equal([]);
        expect(swarmFindings(swarmFile('{replicas: 1}'))).to.equal([]);
        expect(swarmFindings(swarmFile('{replicas: 2}', '["127.0.0.1:8001:80"]'))).to.equal([]);
        expect(swarmFindings(swarmFile('{placement: {constraints: ["node.labels.zone == a", "node.role==manager"]}}'))).to.equal(
            warnings('services.web.deploy.placement.constraints[1]'),
        );
        expect(swarmFindings(swarmFile('{placement: {constraints: ["node.role == worker"]}}'))).to.equal([]);
    });

    it('names where a path leads, and keeps the socket advice for the Docker socket', () => {
        const [socket] = lintCompose(parseCompose(fixture('unnormalised-paths.yaml')), context()).filter((finding) =>
            finding.path.endsWith('volumes[3]'),
        );
        // /var/run is often a link to /run: the message names where the link leads, when it does.
        expect(socket?.message ?? '').to.startWith('app mounts /var//run/docker.sock (/var/run/docker.sock');
        expect(socket?.message ?? '').to.endWith(': it is the Docker socket: whoever holds it starts containers as root on the host');
        expect(socket?.fix).to.contain('socket proxy');

        const [master] = lintCompose(parseCompose(fixture('gatehouse-places.yaml')), context()).filter((finding) =>
            finding.path.endsWith('volumes[1]'),
        );
        expect(master?.message).to.equal(
            `app mounts ../../data/master.key (${Path.join(root, 'data', 'master.key')}): it is in Gatehouse's data folder, with its master key and database`,
        );
    });

    it('judges variables by the values the deploy gives them, so other secrets change the verdict', () => {
        const text = fixture('variables.yaml');
        expect(hasUnacceptedRisks(lintCompose(parseCompose(text), context()))).to.be.true();
        const harmless = { HOST_ROOT: './host', SOCKET_DIR: './run', APP_DATA: './data/app/files' };
        expect(lintCompose(parseCompose(text), context(harmless))).to.equal([]);
    });

    it('never shows the values variables take: they come from the secrets', () => {
        const text = [
            'services:',
            '  app:',
            '    image: ghcr.io/example/app:1.4.2',
            '    restart: unless-stopped',
            "    healthcheck: {test: ['CMD', 'true']}",
            '    network_mode: ${NETWORK}',
            '    ports: ["${BIND}:8080:80"]',
            '    devices: ["${DEVICE}:/dev/disk"]',
            '    env_file: ${ENV_FILE}',
            '    volumes:',
            '      - ${SECRET_DIR}:/data',
            '      - ${SECRET_DIR}/../..:/host',
        ].join('\n');
        const secret = {
            NETWORK: 'container:s3cr3t-db',
            BIND: '10.9.8.7',
            DEVICE: '/dev/s3cr3t',
            ENV_FILE: '/srv/s3cr3t.env',
            SECRET_DIR: '/srv/s3cr3t',
        };
        const found = lintCompose(parseCompose(text), context(secret));
        expect(brief(found)).to.equal([
            ...risks('services.app.network_mode', 'services.app.devices[0]'),
            ...warnings('services.app.volumes[0]'),
            ...risks('services.app.volumes[1]', 'services.app.env_file', 'services.app.ports[0]'),
        ]);
        for (const finding of found) {
            expect(`${finding.message} ${finding.fix ?? ''}`).to.not.match(/s3cr3t|10\.9\.8\.7/);
        }
    });

    it('follows symbolic links in the app folder, as Docker and the env file reader follow them', () => {
        const data = Path.join(root, 'apps', 'app', 'data');
        Fs.mkdirSync(data, { recursive: true });
        Fs.symlinkSync('/', Path.join(data, 'root'));
        Fs.symlinkSync('../../../data', Path.join(data, 'up'));
        Fs.symlinkSync('/etc/passwd', Path.join(data, 'app.env'));
        Fs.mkdirSync(Path.join(data, 'plain'));
        const text = [
            'services:',
            '  app:',
            '    image: ghcr.io/example/app:1.4.2',
            '    restart: unless-stopped',
            "    healthcheck: {test: ['CMD', 'true']}",
            '    env_file: ./data/app.env',
            '    volumes:',
            '      - ./data/root:/host:ro',
            '      - ./data/up/master.key:/key:ro',
            '      - ./data/plain:/plain',
            '      - ./data/missing/../plain:/missing',
        ].join('\n');
        const found = lintCompose(parseCompose(text), context());
        expect(brief(found)).to.equal(risks('services.app.volumes[0]', 'services.app.volumes[1]', 'services.app.env_file'));
        expect(found[0]?.message).to.contain(`(${Path.join(data, 'root')}, a link to /)`);
    });

    it('finds nothing in the app folder, in named volumes and in tmpfs', () => {
        const text = [
            'services:',
            '  app:',
            '    image: ghcr.io/example/app:1.4.2',
            '    restart: unless-stopped',
            "    healthcheck: {test: ['CMD', 'true']}",
            '    env_file: [./app.env, {path: secrets.env}]',
            '    volumes:',
            '      - data:/data',
            '      - ./config:/config',
            '      - type: tmpfs',
            '        target: /tmp',
            '      - /cache',
            'volumes:',
            '  data:',
        ].join('\n');
        expect(lintCompose(parseCompose(text), context())).to.equal([]);
    });
});

describe('compose lint: the deploy gate and the routes that lint', () => {
    let server: DeployTestServer;
    let editor: Browser;
    let dataDir: string;
    const image = '127.0.0.1:9/example/shop';

    /** A compose file that passes validation and every other lint rule, with the given extra volume. */
    const composeWith = (volume: string) =>
        [
            'services:',
            '  web:',
            `    image: ${image}:1.0`,
            '    restart: unless-stopped',
            "    healthcheck: {test: ['CMD', 'true']}",
            '    ports: ["127.0.0.1:20000:80"]',
            '    volumes:',
            '      - ./data:/data',
            `      - ${volume}`,
        ].join('\n');

    before(async () => {
        server = await deployTestServer();
        editor = await server.signInAs('editor');
        dataDir = server.context.config.dataDir;
        const created = await editor.post('/api/apps', { name: 'shop', image, tag: '1.0' });
        expect(created.status, created.text).to.equal(201);
    });

    after(async () => {
        await server.context.cleanup();
    });

    it('/api/compose/validate lints paths against APPS_DIR, with the secrets given', async () => {
        const text = composeWith('../../master.key:/key:ro').replace('./data:/data', '${HOST_ROOT}:/host');
        const response = await editor.post('/api/compose/validate', { text, secrets: { HOST_ROOT: '/' } });
        expect(response.status, response.text).to.equal(200);
        const lint = (response.body as { lint: Finding[] }).lint;
        expect(brief(lint)).to.equal(risks('services.web.volumes[0]', 'services.web.volumes[1]'));
        expect(lint[1]?.message).to.contain(Path.join(dataDir, 'master.key'));
    });

    it('refuses a compose update that climbs out of the app folder without acceptRisks, and saves nothing', async () => {
        const before = await editor.get('/api/apps/shop');
        const text = composeWith('../../:/gatehouse');
        const refused = await editor.put('/api/apps/shop/compose', { mode: 'text', text });
        expect(refused.status, refused.text).to.equal(422);
        const error = (refused.body as { error: string }).error;
        expect(error).to.contain('acceptRisks');
        expect(error).to.contain("Gatehouse's data folder");
        const after = await editor.get('/api/apps/shop');
        expect((after.body as { app: { draft: unknown } }).app.draft).to.equal((before.body as { app: { draft: unknown } }).app.draft);
    });

    it("refuses to deploy a draft whose path is assembled from the app's secrets, and previews the risk", async () => {
        const saved = await editor.put('/api/apps/shop/draft', {
            compose: composeWith('${CERTS}/shop.localhost:/certs:ro'),
            secrets: { CERTS: server.context.config.apps.certificatesDir },
        });
        expect(saved.status, saved.text).to.equal(200);

        const preview = await editor.post('/api/apps/shop/preview', {});
        expect(preview.status, preview.text).to.equal(200);
        const lint = (preview.body as { lint: Finding[] }).lint;
        expect(lint.filter((finding) => finding.level === 'risk').map((finding) => finding.path)).to.equal(['services.web.volumes[1]']);

        const refused = await editor.post('/api/apps/shop/deploy', {});
        expect(refused.status, refused.text).to.equal(422);
        expect((refused.body as { error: string }).error).to.contain('acceptRisks');
        expect((refused.body as { error: string }).error).to.contain('TLS certificates');
    });
});
