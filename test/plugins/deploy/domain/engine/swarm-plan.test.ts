import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type Docker from 'dockerode';

import { parseCompose } from '../../../../../plugins/deploy/domain/compose/compose-parse.ts';
import { planProject } from '../../../../../plugins/deploy/domain/engine/compose-plan.ts';
import { bytesOf, planStack, STACK_LABEL, type StackPlan } from '../../../../../plugins/deploy/domain/engine/swarm-plan.ts';
import { LABEL } from '../../../../../plugins/deploy/domain/host/compose-labels.ts';
import { temporaryDirectory } from '../../../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

function stackOf(lines: string[], values: Record<string, string> = {}, workingDir = '/srv/shop'): StackPlan {
    const text = [...lines, ''].join('\n');
    const spec = parseCompose(text);
    const plan = planProject(spec, {
        project: 'shop',
        workingDir,
        composeFile: `${workingDir}/compose.yaml`,
        values,
        objectKey: OBJECT_KEY,
    });
    return planStack(plan);
}

function containerSpec(spec: Docker.CreateServiceOptions): NonNullable<Docker.ContainerTaskSpec['ContainerSpec']> {
    return (spec.TaskTemplate as Docker.ContainerTaskSpec).ContainerSpec ?? {};
}

const OBJECT_KEY = Crypto.randomBytes(32);
const WEB = ['services:', '  web:', '    image: registry.example/web:1.2', '    ports: ["127.0.0.1:8001:80"]'];

describe('deploy engine: a compose file as a Swarm stack', () => {
    it('names each service <app>_<service> on the overlay network of the app, with one replica and rollback on a failed update by default', () => {
        const stack = stackOf(WEB);
        expect(stack.networks).to.equal([{ name: 'shop_default', external: false }]);
        const [web] = stack.services;
        expect(web?.name).to.equal('shop_web');
        expect(web?.replicas).to.equal(1);
        const spec = web?.spec as Docker.CreateServiceOptions;
        expect(spec.Mode).to.equal({ Replicated: { Replicas: 1 } });
        expect(spec.Labels?.[STACK_LABEL]).to.equal('shop');
        expect(containerSpec(spec).Labels?.[STACK_LABEL]).to.equal('shop');
        expect(containerSpec(spec).Image).to.equal('registry.example/web:1.2');
        expect((spec.TaskTemplate as Docker.ContainerTaskSpec).Networks).to.equal([{ Target: 'shop_default', Aliases: ['web'] }]);
        expect(spec.UpdateConfig?.FailureAction).to.equal('rollback');
        expect(spec.EndpointSpec).to.equal({
            Mode: 'vip',
            Ports: [{ Protocol: 'tcp', TargetPort: 80, PublishedPort: 8001, PublishMode: 'ingress' }],
        });
    });

    it('honours the deploy keys: replicas, placement, resources, restart policy, update and rollback configuration', () => {
        const stack = stackOf([
            ...WEB,
            '    deploy:',
            '      replicas: 3',
            '      endpoint_mode: dnsrr',
            '      placement:',
            '        constraints: ["node.role == worker"]',
            '        preferences: [{spread: node.labels.zone}]',
            '        max_replicas_per_node: 1',
            '      resources:',
            '        limits: {cpus: "0.5", memory: 256m}',
            '        reservations: {memory: 64M}',
            '      restart_policy: {condition: on-failure, delay: 5s, max_attempts: 3}',
            '      update_config: {parallelism: 2, delay: 10s, order: start-first, monitor: 30s, failure_action: pause}',
            '      rollback_config: {parallelism: 0}',
        ]);
        const spec = stack.services[0]?.spec as Docker.CreateServiceOptions;
        const task = spec.TaskTemplate as Docker.ContainerTaskSpec;
        expect(spec.Mode).to.equal({ Replicated: { Replicas: 3 } });
        expect(task.Placement).to.equal({
            Constraints: ['node.role == worker'],
            Preferences: [{ Spread: { SpreadDescriptor: 'node.labels.zone' } }],
            MaxReplicas: 1,
        });
        expect(task.Resources).to.equal({
            Limits: { NanoCPUs: 500_000_000, MemoryBytes: 256 * 1024 ** 2 },
            Reservations: { MemoryBytes: 64 * 1024 ** 2 },
        });
        expect(task.RestartPolicy).to.equal({ Condition: 'on-failure', Delay: 5e9, MaxAttempts: 3 });
        expect(spec.UpdateConfig).to.equal({ Parallelism: 2, Delay: 10e9, FailureAction: 'pause', Monitor: 30e9, Order: 'start-first' });
        expect(spec.RollbackConfig).to.equal({ Parallelism: 0, FailureAction: 'pause', Order: 'stop-first' });
        expect(spec.EndpointSpec?.Mode).to.equal('dnsrr');
    });

    it('runs a global service on every node, and publishes a host-mode port on the task node only', () => {
        const stack = stackOf([
            'services:',
            '  agent:',
            '    image: agent:1',
            '    ports: [{target: 9100, published: 9100, mode: host}]',
            '    deploy: {mode: global}',
        ]);
        const [agent] = stack.services;
        expect(agent?.replicas).to.be.undefined();
        expect(agent?.spec.Mode).to.equal({ Global: {} });
        expect(agent?.spec.EndpointSpec?.Ports).to.equal([{ Protocol: 'tcp', TargetPort: 9100, PublishedPort: 9100, PublishMode: 'host' }]);
    });

    it('carries the command, environment, health check and volumes of the container into the task', () => {
        const stack = stackOf(
            [
                'services:',
                '  db:',
                '    image: db:1',
                '    entrypoint: ["/entry"]',
                '    command: serve --port 5432',
                '    environment: {PASSWORD: "${DB_PASSWORD}"}',
                '    healthcheck: {test: ["CMD", "true"], interval: 2s, retries: 3}',
                '    stop_grace_period: 1m30s',
                '    volumes: ["data:/var/lib/db"]',
                'volumes:',
                '  data: {}',
            ],
            { DB_PASSWORD: 'sealed-elsewhere' },
        );
        const container = containerSpec(stack.services[0]?.spec as Docker.CreateServiceOptions);
        expect(container.Command).to.equal(['/entry']);
        expect(container.Args).to.equal(['serve', '--port', '5432']);
        expect(container.Env).to.equal(['PASSWORD=sealed-elsewhere']);
        expect(container.HealthCheck).to.equal({ Test: ['CMD', 'true'], Interval: 2e9, Retries: 3 });
        expect(container.StopGracePeriod).to.equal(90e9);
        expect(container.Mounts).to.equal([{ Type: 'volume', Source: 'shop_data', Target: '/var/lib/db', ReadOnly: false }]);
    });

    it('gives an unchanged file the same spec hash, and a changed one another', () => {
        const hash = (stack: StackPlan) => stack.services[0]?.spec.Labels?.['com.docker.compose.config-hash'];
        expect(hash(stackOf(WEB))).to.equal(hash(stackOf(WEB)));
        expect(hash(stackOf(WEB))).to.not.equal(hash(stackOf([...WEB, '    deploy: {replicas: 2}'])));
    });

    it('refuses what a Swarm service cannot be, naming the key', () => {
        expect(() => stackOf([...WEB, '    privileged: true'])).to.throw(
            'services.web.privileged: a Swarm service cannot have privileged containers',
        );
        expect(() => stackOf([...WEB, '    network_mode: host'])).to.throw(/services\.web\.network_mode/);
        expect(() => stackOf([...WEB, '    deploy: {resources: {limits: {memory: lots}}}'])).to.throw(
            'services.web.deploy.resources: lots is not an amount of memory (write 512m, 1g)',
        );
    });

    it('reads memory amounts as Compose writes them', () => {
        expect(bytesOf('web', '1024')).to.equal(1024);
        expect(bytesOf('web', '100kb')).to.equal(102_400);
        expect(bytesOf('web', '1.5g')).to.equal(1.5 * 1024 ** 3);
        expect(bytesOf('web', 2048)).to.equal(2048);
    });

    describe('secrets and configs', () => {
        const DB_PASSWORD = 'correct horse battery staple';
        const APP_CONFIG = 'listen = 8080\n';
        let appDir: string;

        lab.before(() => {
            appDir = temporaryDirectory('gatehouse-swarm-plan-');
            Fs.writeFileSync(Path.join(appDir, 'app.conf'), APP_CONFIG);
        });

        lab.after(() => Fs.rmSync(appDir, { recursive: true, force: true }));

        const DECLARED = [
            'secrets:',
            '  db_password: {environment: DB_PASSWORD}',
            '  api_key: {external: true}',
            '  tls_key: {external: true, name: shared_tls_key}',
            'configs:',
            '  app_conf: {file: ./app.conf}',
        ];

        function withSecrets(serviceLines: string[], values = { DB_PASSWORD }): StackPlan {
            return stackOf([...WEB, ...serviceLines, ...DECLARED], values, appDir);
        }

        // Keyed with the server's key: a name tells nothing of a short value to whoever reads it without the key.
        const shortHash = (value: string) => Crypto.createHmac('sha256', OBJECT_KEY).update(value).digest('hex').slice(0, 12);

        it('makes a secret of a variable of the secrets file and a config of a file of the app folder, each named by its value', () => {
            const stack = withSecrets(['    secrets: [db_password]', '    configs: [app_conf]']);
            const made = stack.objects.filter((object) => object.make);
            expect(made.map(({ kind, key, name }) => ({ kind, key, name }))).to.equal([
                { kind: 'secret', key: 'db_password', name: `shop_db_password_${shortHash(DB_PASSWORD)}` },
                { kind: 'config', key: 'app_conf', name: `shop_app_conf_${shortHash(APP_CONFIG)}` },
            ]);
            expect(made[0]?.make?.data().toString()).to.equal(DB_PASSWORD);
            expect(made[1]?.make?.data().toString()).to.equal(APP_CONFIG);
            expect(made[0]?.make?.labels).to.equal({ [STACK_LABEL]: 'shop', [LABEL.project]: 'shop', [LABEL.managed]: 'true' });
        });

        it('finds an external one by its name, or by its key', () => {
            const stack = withSecrets([]);
            const external = stack.objects.filter((object) => !object.make).map(({ key, name }) => ({ key, name }));
            expect(external).to.equal([
                { key: 'api_key', name: 'api_key' },
                { key: 'tls_key', name: 'shared_tls_key' },
            ]);
        });

        it("mounts the short syntax where Docker does: a secret at /run/secrets/<key>, a config at /<key>, 0444, root's", () => {
            const stack = withSecrets(['    secrets: [db_password, api_key]', '    configs: [app_conf]']);
            const container = containerSpec(stack.services[0]?.spec as Docker.CreateServiceOptions);
            const file = (Name: string) => ({ Name, UID: '0', GID: '0', Mode: 0o444 });
            expect(container.Secrets).to.equal([
                { SecretName: `shop_db_password_${shortHash(DB_PASSWORD)}`, File: file('db_password') },
                { SecretName: 'api_key', File: file('api_key') },
            ]);
            expect(container.Configs).to.equal([{ ConfigName: `shop_app_conf_${shortHash(APP_CONFIG)}`, File: file('/app_conf') }]);
        });

        it('mounts the long syntax with its target, owner and mode (octal as Compose reads it)', () => {
            const stack = withSecrets([
                '    secrets:',
                '      - {source: db_password, target: db.pass, uid: "70", gid: 70, mode: 0400}',
                '      - {source: tls_key, mode: "0440"}',
                '    configs:',
                '      - {source: app_conf, target: /etc/app/app.conf, mode: 0644}',
            ]);
            const container = containerSpec(stack.services[0]?.spec as Docker.CreateServiceOptions);
            expect(container.Secrets?.map((secret) => secret.File)).to.equal([
                { Name: 'db.pass', UID: '70', GID: '70', Mode: 0o400 },
                { Name: 'tls_key', UID: '0', GID: '0', Mode: 0o440 },
            ]);
            expect(container.Configs?.[0]?.File).to.equal({ Name: '/etc/app/app.conf', UID: '0', GID: '0', Mode: 0o644 });
        });

        it('keeps the value out of the environment and out of anything the plan writes down', () => {
            const stack = withSecrets(['    secrets: [db_password]']);
            expect(containerSpec(stack.services[0]?.spec as Docker.CreateServiceOptions).Env).to.equal([]);
            expect(JSON.stringify(stack)).to.not.include(DB_PASSWORD);
        });

        it('moves a service to a new secret when the value changes, and leaves it as it is when it does not', () => {
            const lines = ['    secrets: [db_password]'];
            const secretName = (stack: StackPlan) =>
                containerSpec(stack.services[0]?.spec as Docker.CreateServiceOptions).Secrets?.[0]?.SecretName;
            const hash = (stack: StackPlan) => stack.services[0]?.spec.Labels?.[LABEL.hash];
            const before = withSecrets(lines);
            const same = withSecrets(lines);
            const changed = withSecrets(lines, { DB_PASSWORD: 'another value' });
            expect(secretName(same)).to.equal(secretName(before));
            expect(hash(same)).to.equal(hash(before));
            expect(secretName(changed)).to.equal(`shop_db_password_${shortHash('another value')}`);
            expect(hash(changed)).to.not.equal(hash(before));
        });

        it('says what is missing without the value: an undeclared name, a variable not in the secrets file, a file not there', () => {
            expect(() => withSecrets(['    secrets: [nope]'])).to.throw('services.web.secrets: no secret nope is declared under secrets');
            expect(() => withSecrets([], {} as { DB_PASSWORD: string })).to.throw(
                "secrets.db_password.environment: DB_PASSWORD is not in the app's secrets file",
            );
            Fs.rmSync(Path.join(appDir, 'app.conf'));
            try {
                expect(() => withSecrets([])).to.throw(`configs.app_conf.file: ${Path.join(appDir, 'app.conf')} is not a file`);
            } finally {
                Fs.writeFileSync(Path.join(appDir, 'app.conf'), APP_CONFIG);
            }
        });

        it('leaves a compose-mode plan alone: its secrets are read only by a Swarm plan', () => {
            const spec = parseCompose([...WEB, '    secrets: [gone]', 'secrets:', '  gone: {file: ./not-there}', ''].join('\n'));
            const plan = planProject(spec, {
                project: 'shop',
                workingDir: appDir,
                composeFile: `${appDir}/compose.yaml`,
                values: {},
                objectKey: OBJECT_KEY,
            });
            expect(plan.services[0]?.create.Env).to.equal([]);
            expect(() => planStack(plan)).to.throw(/secrets\.gone\.file: .* is not a file/);
        });
    });
});
