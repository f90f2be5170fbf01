import Fs from 'node:fs';
import Http from 'node:http';
import type { AddressInfo } from 'node:net';
import Path from 'node:path';
import { pathToFileURL } from 'node:url';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { validateSiteText } from '../../../plugins/deploy/domain/nginx/site-model.ts';
import { ROOT_DIR } from '../../../server.ts';
import { type DeployTestServer, deployTestServer } from '../../helpers/deploy-session.ts';
import { temporaryDirectory } from '../../helpers/server.ts';
import { ensureNginx } from '../../support/nginx.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;
const nginx = ensureNginx();
const needsNginx = { skip: nginx === undefined };

/**
 * A whole identity-provider kind in one file, as a newcomer would write one: it connects to a provider that answers
 * `/whoami` and `/discovery`, and puts apps behind an outpost under `/_standin` that answers with `X-Standin-*`
 * headers. It makes no objects at the provider (a run would fail there); the connection and the sites need none.
 */
const STAND_IN_KIND = `
import type { IdentityProvider, IdentityProviderKind } from '${pathToFileURL(Path.join(ROOT_DIR, 'plugins/idp/idp-types.ts')).href}';

const refuse = async (): Promise<never> => {
    throw new Error('the stand-in makes no objects');
};

function connect({ url, token }: { url: string; token: string }): IdentityProvider {
    const ask = async <T>(path: string): Promise<T> => {
        const response = await fetch(url + path, { headers: { authorization: 'Bearer ' + token } });
        if (!response.ok) {
            throw new Error('the stand-in answered ' + response.status);
        }

        return (await response.json()) as T;
    };
    return {
        checkAdmin: () => ask('/whoami'),
        discover: () => ask('/discovery'),
        createApiToken: refuse,
        revokeToken: refuse,
        groups: async () => [],
        users: async () => [],
        ensureForwardAuthApp: refuse,
        undoForwardAuthApp: refuse,
        replaceGroups: refuse,
        ensureOidcClient: refuse,
        undoOidcClient: refuse,
        ensureSamlProvider: refuse,
        undoSamlProvider: refuse,
        samlCertificate: async () => null,
        removeApplication: async () => [],
    };
}

const kind: IdentityProviderKind = {
    title: 'Stand-in',
    connect,
    oidcEndpoints: (url, name) => ({ issuer: url + '/o/' + name + '/', configUrl: url + '/o/' + name + '/config', logoutUrl: url + '/o/out' }),
    samlEndpoints: (url, name) => {
        const root = url + '/saml/' + name;
        return { entityId: root, ssoRedirectUrl: root, ssoPostUrl: root, sloRedirectUrl: root, metadataUrl: root };
    },
    defaults: (discovery) => ({
        outpost: discovery.outposts[0],
        authorizationFlow: discovery.flows.authorization[0],
        invalidationFlow: discovery.flows.invalidation[0],
    }),
    forwardAuth: () => ({
        outpostPath: '/_standin',
        authPath: '/_standin/check',
        signInLocation: '@standin_sign_in',
        signInPath: '/_standin/login',
        headers: ['X-Standin-User', 'X-Standin-Mail', 'X-Standin-Name'],
        identity: { username: 'X-Standin-User', email: 'X-Standin-Mail', name: 'X-Standin-Name' },
        clear: ['X-Standin-User', 'X-Standin-Mail', 'X-Standin-Name', 'X-Standin-Token'],
        nginx: (outpostUrl, signInPath) => ({
            server: ['# forward auth through the stand-in'],
            outpost: ['proxy_pass ' + outpostUrl + '/_standin;', 'proxy_pass_request_body off;', 'proxy_set_header Content-Length "";'],
            signIn: ['internal;', 'return 302 ' + signInPath + '?rd=$scheme://$http_host$request_uri;'],
            check: ['satisfy all;', 'auth_request /_standin/check;', 'error_page 401 = @standin_sign_in;'],
        }),
    }),
};

export default kind;
`;

/** The stand-in provider: who the token is, and what there is to choose. */
async function standInProvider(token: string) {
    const listener = Http.createServer((request, response) => {
        const answers: Record<string, unknown> = {
            '/whoami': { version: '1.0', username: 'operator' },
            '/discovery': {
                version: '1.0',
                outposts: [{ pk: 'o1', name: 'main outpost', type: 'proxy', managed: null }],
                flows: {
                    authorization: [{ pk: 'f1', slug: 'sign-in', name: 'Sign in' }],
                    invalidation: [{ pk: 'f2', slug: 'sign-out', name: 'Sign out' }],
                },
                signingKeys: [],
            },
        };
        const answer = answers[new URL(request.url ?? '/', 'http://stand-in.invalid').pathname];
        const status = request.headers.authorization !== `Bearer ${token}` ? 403 : answer ? 200 : 404;
        request.resume();
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer ?? {}));
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    return {
        url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}`,
        close: () => {
            listener.closeAllConnections();
            return new Promise((resolve) => listener.close(resolve));
        },
    };
}

interface Preview {
    files: Array<{ kind: string; content: string }>;
}

describe('an identity-provider kind dropped into a folder of IDP_KINDS_DIRS is one, with no other edit', () => {
    let folder: string;
    let provider: Awaited<ReturnType<typeof standInProvider>>;
    let server: DeployTestServer;

    before(async () => {
        folder = temporaryDirectory('gatehouse-idp-kinds-');
        Fs.writeFileSync(Path.join(folder, 'standin.ts'), STAND_IN_KIND);
        provider = await standInProvider('stand-in-token');
        server = await deployTestServer({ IDP_KINDS_DIRS: folder });
    });

    after(async () => {
        await server?.context.cleanup();
        await provider?.close();
        Fs.rmSync(folder, { recursive: true, force: true });
    });

    const connect = async () => await server.admin.put('/api/admin/idp', { kind: 'standin', url: provider.url, token: 'stand-in-token' });

    /** A new app (with the header method), and the nginx site its deploy's preview shows. */
    const previewedSite = async (name: string) => {
        const editor = await server.signInAs('editor');
        expect((await editor.post('/api/apps', { name, image: 'nginx' })).status).to.equal(201);
        expect((await editor.put(`/api/apps/${name}/draft`, { account: 'header' })).status).to.equal(200);
        const preview = await editor.post(`/api/apps/${name}/preview`);
        expect(preview.status, preview.text).to.equal(200);
        return { editor, site: (preview.body as Preview).files.find((file) => file.kind === 'nginx')?.content ?? '' };
    };

    it('is connected through the API, and a deploy would write its forward auth into the site', async () => {
        const admin = server.admin;
        const unknown = await admin.put('/api/admin/idp', { kind: 'nosuchkind', url: provider.url, token: 'stand-in-token' });
        expect(unknown.status, unknown.text).to.equal(422);
        expect(unknown.body).to.equal({ error: 'kind must be one of [authentik, standin]' });

        const connected = await connect();
        expect(connected.status, connected.text).to.equal(200);
        expect(connected.body).to.include({ connected: true, kind: 'standin', version: '1.0' });
        const shown = (await admin.get('/api/admin/idp')).body as {
            kind: string;
            outpost: { name: string };
            health: { status: string; message: string };
        };
        expect(shown.kind).to.equal('standin');
        expect(shown.outpost.name).to.equal('main outpost');
        expect(shown.health).to.include({ status: 'ok', message: `Stand-in 1.0 at ${provider.url} answers` });

        const { editor, site } = await previewedSite('notes');
        expect(site).to.contain(`location /_standin {\n        proxy_pass ${provider.url}/_standin;`);
        expect(site).to.contain('location @standin_sign_in {');
        expect(site).to.contain('return 302 /_standin/login?rd=$scheme://$http_host$request_uri;');
        expect(site).to.contain('auth_request /_standin/check;\n        error_page 401 = @standin_sign_in;');
        // The answer's headers go to the app, and the header method passes the kind's username as Remote-User.
        expect(site).to.contain('proxy_set_header X-Standin-User $fa_x_standin_user;');
        expect(site).to.contain('proxy_set_header Remote-User $fa_x_standin_user;');
        // The kind's own header that its answer does not set is cleared from visitors, as the usual names are.
        expect(site).to.contain('proxy_set_header X-Standin-Token "";');
        expect(site).to.not.contain('goauthentik');

        // The site model reads the kind back from the text, all of it: nothing is left over as hand-written.
        const parsed = await editor.post('/api/nginx/parse', { text: site });
        expect(parsed.status, parsed.text).to.equal(200);
        const model = (parsed.body as { spec: { forwardAuth: unknown; locations: Array<{ auth?: boolean }>; extra?: string } }).spec;
        expect(model.extra).to.not.exist();
        expect(model.locations.map((location) => location.auth)).to.equal([true]);
        expect(model.forwardAuth).to.include({
            kind: 'standin',
            outpostUrl: provider.url,
            signInPath: '/_standin/login',
            identityHeaders: {
                'Remote-User': 'X-Standin-User',
                'Remote-Email': 'X-Standin-Mail',
                'Remote-Name': 'X-Standin-Name',
                'X-idp-username': 'X-Standin-User',
                'X-idp-email': 'X-Standin-Mail',
                'X-idp-name': 'X-Standin-Name',
            },
        });
    });

    it("writes a site that nginx accepts with the kind's lines", needsNginx, async () => {
        expect((await connect()).status).to.equal(200);
        const { site } = await previewedSite('pages');
        expect(site).to.contain('auth_request /_standin/check;');
        expect(await validateSiteText(site, { nginxBin: nginx })).to.equal({ ok: true, errors: [], warnings: [] });
    });

    it('with its file gone, the saved connection names a kind there is not: its health says so, and asking the provider is a 422', async () => {
        expect((await connect()).status).to.equal(200);
        const editor = await server.signInAs('editor');
        const file = Path.join(folder, 'standin.ts');
        Fs.rmSync(file);
        try {
            const gone = 'kind: there is no identity-provider kind standin; there are: authentik';
            const orphan = (await server.admin.get('/api/admin/idp')).body as { kind: string; health: { status: string; message: string } };
            expect(orphan.kind).to.equal('standin');
            expect(orphan.health).to.include({ status: 'rejected', message: gone });
            const users = await editor.get('/api/idp/users?q=a');
            expect(users.status, users.text).to.equal(422);
            expect(users.body).to.equal({ error: gone });
        } finally {
            Fs.writeFileSync(file, STAND_IN_KIND);
        }
    });
});
