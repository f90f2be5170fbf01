/**
 * Auto-login adapters: each signs in to an app server side with its shared account and answers what the browser
 * needs to hold the app's session. An adapter is a file in `plugins/sso/autologin/adapters/` whose default export is an
 * `AutoLoginAdapter`; the file's name is the adapter's name.
 */

export interface AutoLoginRequest {
    /** Where the server reaches the app, e.g. http://127.0.0.1:8081 (an upstream of its nginx site). */
    upstream: string;
    /** The app's public origin as visitors reach it, e.g. https://wiki.apps.test:18443: Host, Origin and Referer come from it. */
    origin: string;
    /** The login page's path when the recipe names one; else the adapter looks for it. */
    loginPath?: string;
    username: string;
    password: string;
    /**
     * The visitor's own headers as nginx passed them (User-Agent, Accept-Language, Accept-Encoding, X-Real-IP,
     * X-Forwarded-For), sent on to the app: apps tie a session to the browser and address that signed in.
     */
    visitorHeaders?: Record<string, string>;
    timeoutMs: number;
}

/** A cookie to set on the browser for the app's domain: host-only (no Domain), per the re-issue rules. */
export interface IssuedCookie {
    name: string;
    value: string;
    path: string;
    expires?: Date;
    maxAge?: number;
    httpOnly: boolean;
    secure: boolean;
    sameSite?: 'Strict' | 'Lax' | 'None';
}

export type AutoLoginOutcome =
    | {
          ok: true;
          cookies: IssuedCookie[];
          /** localStorage entries for the app's origin (an app that keeps its session there). */
          storage: Record<string, string>;
          /** Where the browser goes next: a path on the app. */
          landing: string;
      }
    | { ok: false; reason: string };

export interface AutoLoginAdapter {
    title: string;
    signIn(request: AutoLoginRequest): Promise<AutoLoginOutcome>;
}
