/**
 * A stack's Swarm secrets and configs on the manager, as `docker stack deploy` makes them: each made once from its
 * value under a name that holds a keyed hash of the value (swarm-plan.ts), an external one only found. The value goes to the
 * Docker API alone: never to the run's log, its journal or an error message.
 */
import type Docker from 'dockerode';

import { LABEL } from '../host/compose-labels.ts';
import type { Log, SwarmObject, UpOutcome } from './app-engine.ts';
import type { ObjectKind } from './plan-model.ts';
import type { JournalEntry } from './run-journal.ts';
import { STACK_LABEL, type StackObjectPlan } from './swarm-plan.ts';

type ObjectInfo = { ID: string; Spec?: { Name?: string } };

/** The secrets' and configs' calls of the Docker API, alike but for their names. */
function objectApi(docker: Docker, kind: ObjectKind) {
    const secret = kind === 'secret';
    return {
        list: async (filters: Record<string, string[]>) =>
            (secret ? await docker.listSecrets({ filters }) : await docker.listConfigs({ filters })) as unknown as ObjectInfo[],
        create: async (spec: object) => (secret ? await docker.createSecret(spec) : await docker.createConfig(spec)) as { id?: string },
        handle: (idOrName: string) => (secret ? docker.getSecret(idOrName) : docker.getConfig(idOrName)),
    };
}

/** Removes what Docker has under this id or name; gone already is done. */
export async function removeIfPresent(handle: { remove: (options?: object) => Promise<unknown> }): Promise<void> {
    try {
        await handle.remove();
    } catch (error) {
        if ((error as { statusCode?: number }).statusCode !== 404) throw error;
    }
}

export async function removeObject(docker: Docker, kind: ObjectKind, idOrName: string): Promise<void> {
    await removeIfPresent(objectApi(docker, kind).handle(idOrName));
}

/**
 * Makes the plan's secrets and configs that do not exist yet (journalled first, recorded in `outcome`); an external
 * one that does not exist is an error. Answers each one's id by its name, for the services' specs.
 */
export async function ensureObjects(
    docker: Docker,
    objects: StackObjectPlan[],
    outcome: UpOutcome,
    how: { journal: (entry: JournalEntry) => Promise<void>; log: Log },
): Promise<Map<string, string>> {
    const ids = new Map<string, string>();
    for (const object of objects) {
        const api = objectApi(docker, object.kind);
        const found = (await api.list({ name: [object.name] })).find((candidate) => candidate.Spec?.Name === object.name);
        if (found) {
            ids.set(object.name, found.ID);
            continue;
        }

        if (!object.make) {
            throw new Error(`the ${object.kind} ${object.name} is external and does not exist`);
        }

        await how.journal({ type: 'swarm-object', kind: object.kind, name: object.name });
        const { labels, data } = object.make;
        const created = await api.create({ Name: object.name, Labels: labels, Data: data().toString('base64') });
        ids.set(object.name, created.id ?? object.name);
        outcome.createdObjects.push({ kind: object.kind, id: created.id ?? object.name, name: object.name });
        how.log(`Created the ${object.kind} ${object.name}`);
    }

    return ids;
}

/** The spec with the id of each secret and config it mounts, which the Docker API asks for beside the name. */
export function withObjectIds(spec: Docker.CreateServiceOptions, ids: Map<string, string>): Docker.CreateServiceOptions {
    const template = spec.TaskTemplate as Docker.ContainerTaskSpec;
    const container = template.ContainerSpec;
    if (!container?.Secrets && !container?.Configs) return spec;
    const idOf = (name: string | undefined) => ids.get(name ?? '') ?? name;
    const Secrets = container.Secrets?.map((secret) => ({ ...secret, SecretID: idOf(secret.SecretName) }));
    const Configs = container.Configs?.map((config) => ({ ...config, ConfigID: idOf(config.ConfigName) }));
    return {
        ...spec,
        TaskTemplate: { ...template, ContainerSpec: { ...container, ...(Secrets ? { Secrets } : {}), ...(Configs ? { Configs } : {}) } },
    };
}

/** The secrets and configs Gatehouse made for the stack (external ones are not the stack's). */
export async function stackObjects(docker: Docker, project: string): Promise<SwarmObject[]> {
    const filters = { label: [`${STACK_LABEL}=${project}`, `${LABEL.managed}=true`] };
    const kinds = ['secret', 'config'] as const;
    const listed = await Promise.all(kinds.map(async (kind) => ({ kind, found: await objectApi(docker, kind).list(filters) })));
    return listed.flatMap(({ kind, found }) => found.map((object) => ({ kind, id: object.ID, name: object.Spec?.Name ?? object.ID })));
}

/** The ids of the secrets and configs any service of the swarm mounts. */
export async function mountedObjectIds(docker: Docker): Promise<Set<string>> {
    const services = (await docker.listServices()) as Array<{ Spec?: Docker.CreateServiceOptions }>;
    return new Set(
        services.flatMap((service) => {
            const container = (service.Spec?.TaskTemplate as Docker.ContainerTaskSpec | undefined)?.ContainerSpec;
            return [
                ...(container?.Secrets ?? []).map((secret) => secret.SecretID ?? ''),
                ...(container?.Configs ?? []).map((config) => config.ConfigID ?? ''),
            ];
        }),
    );
}
