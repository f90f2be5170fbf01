/**
 * The `deploy:` keys, which a Docker Swarm reads (DEPLOY_ENGINE=swarm, engine/swarm-plan.ts): what would make
 * replicas fail to start, or put the app where the swarm keeps its state.
 */
import type { ServiceLint, ServiceRule } from './compose-lint-types.ts';

interface Deploy {
    mode?: string;
    replicas?: number;
    placement?: { constraints?: string[]; max_replicas_per_node?: number };
}

const ON_MANAGERS = /^node\.role\s*==\s*manager$/;

/** Replicas of a service that publishes a host-mode port must be on different nodes: a node binds a port once. */
function hostPortReplicas({ service, report }: ServiceLint): void {
    const deploy = (service.extra?.deploy ?? {}) as Deploy;
    const replicas = deploy.mode === 'global' ? 1 : (deploy.replicas ?? 1);
    if (replicas < 2 || deploy.placement?.max_replicas_per_node === 1) {
        return;
    }

    (service.ports ?? []).forEach((port, index) => {
        if (
            typeof port === 'object' &&
            (port as { mode?: string }).mode === 'host' &&
            (port as { published?: unknown }).published !== undefined
        ) {
            report(
                'warning',
                ['ports', index],
                `${replicas} replicas publish port ${String((port as { published: unknown }).published)} in host mode: two on one node cannot both bind it, and the second never starts`,
                'set deploy.placement.max_replicas_per_node: 1 (and have as many nodes), or publish through the routing mesh',
            );
        }
    });
}

/** Managers keep the swarm's state (Raft): an app placed on them competes with that, and with Gatehouse and nginx. */
function placementOnManagers({ name, service, report }: ServiceLint): void {
    const constraints = ((service.extra?.deploy ?? {}) as Deploy).placement?.constraints ?? [];
    constraints.forEach((constraint, index) => {
        if (ON_MANAGERS.test(constraint.trim())) {
            report(
                'warning',
                ['deploy', 'placement', 'constraints', index],
                `${name} runs only on manager nodes, which keep the swarm's state and run Gatehouse's nginx: a busy app there slows the whole swarm`,
                'place it on workers (node.role == worker), or drain the managers of other work',
            );
        }
    });
}

export const SWARM_RULES: ServiceRule[] = [hostPortReplicas, placementOnManagers];
