/**
 * An app behind forward auth, as authentik's documentation sets it up: one `forward_single` proxy provider and one
 * application per app, since only single-application mode keeps per-app policies, and the provider added to the
 * outpost's list. (forward-auth.ts beside it is nginx's side.)
 */
import type { ForwardAuthApp, ForwardAuthChanges, Serialise } from '../../idp-types.ts';
import { ensureApplication, recordCreatedProvider, undoApplication } from './applications.ts';
import { type AuthentikClient, authentikApi, type Json, json, PAGE_SIZE, text } from './client.ts';

export async function findProxyProvider(client: AuthentikClient, name: string): Promise<Json | undefined> {
    const found = await client.all((page) => client.providers.providersProxyListRaw({ nameIexact: name, page, pageSize: PAGE_SIZE }));
    return found.find((provider) => provider.name === name);
}

/** Makes the proxy provider or updates the one there; answers its id. */
async function ensureProxyProvider(
    client: AuthentikClient,
    app: ForwardAuthApp,
    changes: ForwardAuthChanges,
    recorded: () => Promise<void>,
): Promise<number> {
    const fields = {
        mode: authentikApi().ProxyMode.ForwardSingle,
        externalHost: app.externalHost,
        authorizationFlow: app.authorizationFlow,
        invalidationFlow: app.invalidationFlow,
    };
    const existing = await findProxyProvider(client, app.objectName);
    if (!existing) {
        const created = await json(client.providers.providersProxyCreateRaw({ proxyProviderRequest: { name: app.objectName, ...fields } }));
        return recordCreatedProvider(changes, created);
    }

    const id = Number(existing.pk);
    changes.providerId = id;
    changes.previousProvider = {
        externalHost: text(existing.external_host),
        authorizationFlow: text(existing.authorization_flow),
        invalidationFlow: text(existing.invalidation_flow),
    };
    await recorded();
    await client.providers.providersProxyPartialUpdateRaw({ id, patchedProxyProviderRequest: fields });
    return id;
}

async function outpostProviders(client: AuthentikClient, outpost: string): Promise<number[]> {
    const current = await json(client.outposts.outpostsInstancesRetrieveRaw({ uuid: outpost }));
    return ((current.providers as number[] | undefined) ?? []).map(Number);
}

async function setOutpostProviders(client: AuthentikClient, outpost: string, providers: number[]): Promise<void> {
    await client.outposts.outpostsInstancesPartialUpdateRaw({ uuid: outpost, patchedOutpostRequest: { providers } });
}

/** Adds the provider to the outpost unless it is there; `adding` is awaited just before it is added. */
async function addToOutpost(
    client: AuthentikClient,
    outpost: string,
    providerId: number,
    serialise: Serialise,
    adding: () => Promise<void>,
): Promise<void> {
    await serialise(`authentik-outpost:${outpost}`, async () => {
        const providers = await outpostProviders(client, outpost);
        if (providers.includes(providerId)) {
            return;
        }

        await adding();
        await setOutpostProviders(client, outpost, [...providers, providerId]);
    });
}

async function removeFromOutpost(client: AuthentikClient, outpost: string, providerId: number): Promise<void> {
    const others = (await outpostProviders(client, outpost)).filter((id) => id !== providerId);
    await setOutpostProviders(client, outpost, others);
}

export async function ensureForwardAuthApp(
    client: AuthentikClient,
    app: ForwardAuthApp,
    serialise: Serialise,
    changes: ForwardAuthChanges,
    recorded: () => Promise<void>,
): Promise<void> {
    await client.call(`setting up ${app.objectName}`, async () => {
        const providerId = await ensureProxyProvider(client, app, changes, recorded);
        await ensureApplication(client, app, providerId, changes, recorded);
        await addToOutpost(client, app.outpost, providerId, serialise, async () => {
            changes.addedToOutpost = true;
            await recorded();
        });
    });
}

export async function undoForwardAuthApp(client: AuthentikClient, app: ForwardAuthApp, changes: ForwardAuthChanges): Promise<void> {
    await client.call(`undoing the changes to ${app.objectName}`, async () => {
        await undoApplication(client, changes.applicationSlug, changes);
        if (changes.providerId === null) {
            return;
        }

        if (changes.providerCreated) {
            // Deleting a provider takes it off every outpost.
            await client.providers.providersProxyDestroyRaw({ id: changes.providerId });
            return;
        }

        if (changes.addedToOutpost) {
            await removeFromOutpost(client, app.outpost, changes.providerId);
        }

        if (changes.previousProvider) {
            await client.providers.providersProxyPartialUpdateRaw({
                id: changes.providerId,
                patchedProxyProviderRequest: { mode: authentikApi().ProxyMode.ForwardSingle, ...changes.previousProvider },
            });
        }
    });
}
