/**
 * authentik's forward auth for nginx, as its documentation writes it: the outpost under `/outpost.goauthentik.io` on
 * the app's own domain, its answer's `X-authentik-*` headers, and a 401 sent to the outpost's start page.
 */
import type { ForwardAuthContract } from '../../idp-types.ts';

const OUTPOST_PATH = '/outpost.goauthentik.io';
const SIGN_IN_LOCATION = '@goauthentik_proxy_signin';
const HEADERS = [
    'X-authentik-username',
    'X-authentik-groups',
    'X-authentik-entitlements',
    'X-authentik-email',
    'X-authentik-name',
    'X-authentik-uid',
];

export const authentikForwardAuth: ForwardAuthContract = {
    outpostPath: OUTPOST_PATH,
    authPath: `${OUTPOST_PATH}/auth/nginx`,
    signInLocation: SIGN_IN_LOCATION,
    signInPath: `${OUTPOST_PATH}/start`,
    headers: HEADERS,
    identity: { username: 'X-authentik-username', email: 'X-authentik-email', name: 'X-authentik-name' },
    clear: [...HEADERS, 'X-authentik-jwt', ...['jwks', 'outpost', 'provider', 'app', 'version'].map((name) => `X-authentik-meta-${name}`)],
    nginx: (outpostUrl, signInPath) => ({
        server: ['# forward auth through the authentik outpost', 'proxy_buffers 8 16k;', 'proxy_buffer_size 32k;'],
        outpost: [
            `proxy_pass ${outpostUrl}${OUTPOST_PATH};`,
            'proxy_set_header Host $host;',
            'proxy_set_header X-Original-URL $scheme://$http_host$request_uri;',
            // authentik matches the app's external host with its port (Host alone has none).
            'proxy_set_header X-Forwarded-Host $http_host;',
            'add_header Set-Cookie $auth_cookie;',
            'auth_request_set $auth_cookie $upstream_http_set_cookie;',
            'proxy_pass_request_body off;',
            'proxy_set_header Content-Length "";',
        ],
        signIn: ['internal;', 'add_header Set-Cookie $auth_cookie;', `return 302 ${signInPath}?rd=$scheme://$http_host$request_uri;`],
        check: [
            `auth_request ${OUTPOST_PATH}/auth/nginx;`,
            `error_page 401 = ${SIGN_IN_LOCATION};`,
            'auth_request_set $auth_cookie $upstream_http_set_cookie;',
            'add_header Set-Cookie $auth_cookie;',
        ],
    }),
};
