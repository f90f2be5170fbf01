import type { Server } from '@hapi/hapi';

export const PENDING_SIGN_IN_COOKIE = 'dp_oidc';

const PENDING_COOKIE_TTL_MS = 10 * 60_000;

/**
 * The short-lived cookie that carries state, nonce and PKCE verifier from the start of an OIDC sign-in to
 * its callback, sealed (iron) with a key derived from the master key. SameSite=Lax, because the callback
 * is a top-level navigation from the identity provider's site.
 */
export default function definePendingSignInCookie(server: Server): void {
    const { publicUrl } = server.app.config;
    server.state(PENDING_SIGN_IN_COOKIE, {
        encoding: 'iron',
        password: server.app.sealer.derive('dp_oidc cookie').toString('hex'),
        ttl: PENDING_COOKIE_TTL_MS,
        isSecure: publicUrl.startsWith('https:'),
        isHttpOnly: true,
        isSameSite: 'Lax',
        path: new URL('api/auth/oidc', publicUrl).pathname,
        ignoreErrors: true,
        clearInvalid: true,
    });
}
