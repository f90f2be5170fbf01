import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type Docker from 'dockerode';

import { parseCompose } from '../../../../../plugins/deploy/domain/compose/compose-parse.ts';
import { planProject } from '../../../../../plugins/deploy/domain/engine/compose-plan.ts';
import { bytesOf, planStack, STACK_LABEL, type StackPlan } from '../../../../../plugins/deploy/domain/engine/swarm-plan.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

function stackOf(lines: string[], values: Record<string, string> = {}): StackPlan {
    const text = [...lines, ''].join('\n');
    const spec = parseCompose(text);
    const plan = planProject(spec, { project: 'shop', workingDir: '/srv/shop', composeFile: '/srv/shop/compose.yaml', values });
    return planStack(plan);
}

function containerSpec(spec: Docker.CreateServiceOptions): NonNullable<Docker.ContainerTaskSpec['ContainerSpec']> {
    return (spec.TaskTemplate as Docker.ContainerTaskSpec).ContainerSpec ?? {};
}

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
});
