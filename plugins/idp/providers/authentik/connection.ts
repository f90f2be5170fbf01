/** What a connection is checked and set up with: the token's rights and the version, discovery, API tokens. */
import Joi from 'joi';

import { type Discovery, IdpError } from '../../idp-types.ts';
import { type AuthentikClient, authentikApi, fitting, key, named, PAGE_SIZE, text, words } from './client.ts';

const ME = named({ user: named({ username: words, is_superuser: Joi.boolean().required() }).required() });
const VERSION = named({ version_current: words });
const OUTPOST = named({ pk: key, name: words, type: words, managed: Joi.string().allow('', null) });
const FLOW = named({ pk: key, slug: key, name: words });
const KEYPAIR = named({ pk: key, name: words });
const TOKEN_KEY = named({ key });

export async function checkAdmin(client: AuthentikClient): Promise<{ version: string; username: string }> {
    const me = await client.call("reading the token's user", async () => {
        const response = await client.core.coreUsersMeRetrieveRaw();
        const type = response.raw.headers.get('content-type') ?? '';
        if (!type.includes('json')) {
            throw new IdpError('not-a-provider', `${client.url} does not answer as authentik: /api/v3/core/users/me/ is not JSON`);
        }

        return fitting<{ user: { username: string; is_superuser: boolean } }>(
            await response.raw.json(),
            ME,
            client.url,
            "its token's user",
        );
    });
    if (!me.user.is_superuser) {
        throw new IdpError('not-admin', `the token's user ${me.user.username} is not an authentik administrator (superuser)`);
    }

    const version = await client.call('reading the version', () =>
        client.read<{ version_current: string }>(client.admin.adminVersionRetrieveRaw(), VERSION, 'its version'),
    );
    return { version: version.version_current, username: text(me.user.username) };
}

export async function discover(client: AuthentikClient): Promise<Discovery> {
    const { version } = await checkAdmin(client);
    return await client.call('discovering outposts, flows and keys', async () => {
        const outposts = await client.all((page) => client.outposts.outpostsInstancesListRaw({ page, pageSize: PAGE_SIZE }), OUTPOST);
        const flows = async (designation: 'authorization' | 'invalidation') =>
            (await client.all((page) => client.flows.flowsInstancesListRaw({ designation, page, pageSize: PAGE_SIZE }), FLOW)).map(
                (flow) => ({
                    pk: text(flow.pk),
                    slug: text(flow.slug),
                    name: text(flow.name),
                }),
            );
        const keys = await client.all(
            (page) => client.crypto.cryptoCertificatekeypairsListRaw({ hasKey: true, page, pageSize: PAGE_SIZE }),
            KEYPAIR,
        );
        return {
            version,
            outposts: outposts.map((outpost) => ({
                pk: text(outpost.pk),
                name: text(outpost.name),
                type: text(outpost.type),
                managed: outpost.managed === null || outpost.managed === undefined ? null : text(outpost.managed),
            })),
            flows: { authorization: await flows('authorization'), invalidation: await flows('invalidation') },
            signingKeys: keys.map((key) => ({ pk: text(key.pk), name: text(key.name) })),
        };
    });
}

export async function createApiToken(client: AuthentikClient, identifier: string, description: string): Promise<string> {
    return await client.call('creating an API token', async () => {
        const existing = await client.all((page) => client.core.coreTokensListRaw({ identifier, page, pageSize: PAGE_SIZE }));
        if (existing.some((token) => token.identifier === identifier)) {
            await client.core.coreTokensDestroyRaw({ identifier });
        }

        await client.core.coreTokensCreateRaw({
            tokenRequest: { identifier, intent: authentikApi().IntentEnum.Api, expiring: false, description },
        });
        const view = await client.read<{ key: string }>(
            client.core.coreTokensViewKeyRetrieveRaw({ identifier }),
            TOKEN_KEY,
            'the new token',
        );
        return view.key;
    });
}

export async function revokeToken(client: AuthentikClient, identifier: string): Promise<void> {
    await client.call('revoking the token', async () => {
        await client.core.coreTokensDestroyRaw({ identifier });
    });
}
