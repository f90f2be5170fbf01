/**
 * authentik's applications, which every kind of app (forward auth, OIDC, SAML) gets in front of its provider, and the
 * group bindings that say who may use one.
 */
import { IdpError, type ProviderChanges } from '../../idp-types.ts';
import { asIdpError, type AuthentikClient, authentikApi, type Json, json, PAGE_SIZE, text } from './client.ts';

/** What an application's ensure has changed, for its undo. */
type ApplicationChanges = Pick<ProviderChanges, 'applicationCreated' | 'previousGroups' | 'previousApplication'>;

/** What an application is made from, the same for every kind of app. */
interface App {
    objectName: string;
    title: string;
    launchUrl: string;
    groups: string[];
}

export async function findApplication(client: AuthentikClient, slug: string): Promise<Json | undefined> {
    try {
        return await json(client.core.coreApplicationsRetrieveRaw({ slug }));
    } catch (error) {
        if (error instanceof authentikApi().ResponseError && error.response.status === 404) {
            return undefined;
        }

        throw error;
    }
}

/** Notes a provider the adapter has just made; answers its id. */
export function recordCreatedProvider(changes: { providerId: number | null; providerCreated: boolean }, created: Json): number {
    const id = Number(created.pk);
    changes.providerId = id;
    changes.providerCreated = true;
    return id;
}

/** Makes the application or updates the one there, then binds exactly the app's groups to it. */
export async function ensureApplication(
    client: AuthentikClient,
    app: App,
    providerId: number,
    changes: ApplicationChanges,
    recorded: () => Promise<void>,
): Promise<void> {
    const fields = { name: app.title, provider: providerId, metaLaunchUrl: app.launchUrl };
    const existing = await findApplication(client, app.objectName);
    if (!existing) {
        const created = await json(client.core.coreApplicationsCreateRaw({ applicationRequest: { slug: app.objectName, ...fields } }));
        changes.applicationCreated = true;
        // Its bindings go with it when the undo deletes it.
        await bindGroups(client, text(created.pk), app.groups);
        return;
    }

    changes.previousApplication = {
        name: text(existing.name),
        provider: existing.provider === null || existing.provider === undefined ? null : Number(existing.provider),
        metaLaunchUrl: text(existing.meta_launch_url),
    };
    await recorded();
    await client.core.coreApplicationsPartialUpdateRaw({ slug: app.objectName, patchedApplicationRequest: fields });
    await bindGroups(client, text(existing.pk), app.groups, async (before) => {
        changes.previousGroups = before;
        await recorded();
    });
}

/** Makes the provider (or updates the one there), then its application, bound to the groups, recording each change. */
export async function ensureWithApplication(
    client: AuthentikClient,
    app: App,
    changes: ProviderChanges,
    existing: Json | undefined,
    provider: {
        create: () => Promise<Json>;
        update: (id: number) => Promise<unknown>;
        previous: (existing: Json) => Record<string, unknown>;
        recorded: () => Promise<void>;
    },
): Promise<void> {
    let providerId: number;
    if (existing) {
        providerId = Number(existing.pk);
        changes.providerId = providerId;
        changes.previousProvider = provider.previous(existing);
        await provider.recorded();
        await provider.update(providerId);
    } else {
        providerId = recordCreatedProvider(changes, await provider.create());
        await provider.recorded();
    }

    await ensureApplication(client, app, providerId, changes, provider.recorded);
}

/** Deletes an application the run made, or puts back the fields and groups it had before. */
export async function undoApplication(client: AuthentikClient, slug: string, changes: ApplicationChanges): Promise<void> {
    if (changes.applicationCreated) {
        await client.core.coreApplicationsDestroyRaw({ slug });
        return;
    }

    const previous = changes.previousApplication;
    if (previous) {
        await client.core.coreApplicationsPartialUpdateRaw({ slug, patchedApplicationRequest: previous });
    }

    if (changes.previousGroups) {
        const application = await json(client.core.coreApplicationsRetrieveRaw({ slug }));
        await bindGroups(client, text(application.pk), changes.previousGroups);
    }
}

async function groupBindings(client: AuthentikClient, target: string): Promise<Json[]> {
    const bindings = await client.all((page) => client.policies.policiesBindingsListRaw({ target, page, pageSize: PAGE_SIZE }));
    return bindings.filter((binding) => binding.group !== null && binding.group !== undefined);
}

/**
 * Binds exactly `groups` to the application (other kinds of binding are left alone); answers the groups bound
 * before, also to `found` before the first change.
 */
async function bindGroups(
    client: AuthentikClient,
    target: string,
    groups: string[],
    found?: (before: string[]) => void | Promise<void>,
): Promise<string[]> {
    const bindings = await groupBindings(client, target);
    const before = bindings.map((binding) => text(binding.group));
    await found?.(before);
    for (const binding of bindings) {
        if (!groups.includes(text(binding.group))) {
            await client.policies.policiesBindingsDestroyRaw({ policyBindingUuid: text(binding.pk) });
        }
    }

    for (const [order, group] of groups.entries()) {
        if (!before.includes(group)) {
            await client.policies.policiesBindingsCreateRaw({ policyBindingRequest: { target, group, order, enabled: true } });
        }
    }

    return before;
}

/** Binds exactly `groups` to the application `objectName`, putting back what it had changed should it fail half-way. */
export async function replaceGroups(client: AuthentikClient, objectName: string, groups: string[]): Promise<string[]> {
    return await client.call(`binding groups to ${objectName}`, async () => {
        const application = await findApplication(client, objectName);
        if (!application) {
            throw new IdpError('not-found', `authentik has no application ${objectName}: deploy the app first`);
        }

        const target = text(application.pk);
        const seen: { before?: string[] } = {};
        try {
            return await bindGroups(client, target, groups, (before) => {
                seen.before = before;
            });
        } catch (error) {
            const failure = await asIdpError(error, client.url, `binding groups to ${objectName}`);
            if (seen.before) {
                // What the call had changed before it failed is put back; should that fail too, both are told.
                await bindGroups(client, target, seen.before).catch(async (undoError: unknown) => {
                    const undo = await asIdpError(undoError, client.url, `putting back the groups of ${objectName}`);
                    throw new IdpError(failure.reason, `${failure.message}; ${undo.message}`);
                });
            }

            throw failure;
        }
    });
}
