import type { Server } from '@hapi/hapi';
import { giteaApi } from 'gitea-js';

/** The gitea-js client, as Gitea's users build it, against a started server, authenticated with the user's token. */
export function giteaClient(server: Server, user: { token: string } | string): ReturnType<typeof giteaApi> {
    const token = typeof user === 'string' ? user : user.token;
    return giteaApi(`http://127.0.0.1:${server.info.port}`, { customFetch: fetch, token });
}
