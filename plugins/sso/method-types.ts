/**
 * How a visitor is known inside an app: the sign-in methods (the draft's `account`). A method is a file in
 * `plugins/sso/` whose default export is a `SignInMethod`; the file's name is the method's name.
 */
import type { HostConfig } from '../../lib/config.ts';
import type { SiteSpec } from '../deploy/domain/nginx/site-types.ts';

export type MethodNeed = 'adminUser' | 'samlAcs' | 'sharedUser' | 'sharedPassword';

/** What a method works with: the app and the draft's fields it needs (the shared password opened, in runs only). */
export interface MethodSettings {
    app: string;
    domain: string;
    /** The app's URL as visitors reach it, with its port when not the default. */
    origin: string;
    adminUser?: string;
    samlAcs?: string;
    sharedUser?: string;
    sharedPassword?: string;
}

export interface MethodCheck {
    ok: boolean;
    text: string;
    fix: string | null;
}

/** What a method's check may use, inside the run's worker. */
export interface MethodCheckContext {
    settings: MethodSettings;
    host: HostConfig;
    https: boolean;
    /** The site as written. */
    site: string;
}

export interface SignInMethod {
    title: string;
    /** Whether the visitor is known inside the app through the identity provider (own login is not). */
    singleSignOn: boolean;
    /** Draft fields the method cannot work without. */
    needs: MethodNeed[];
    /** The site as the run writes it, forward auth in place. The file is root's alone (0600), so credentials may go in. */
    site?(spec: SiteSpec, settings: MethodSettings): SiteSpec;
    /** The values shown on the app (`identity.values`): never a secret. */
    values(settings: MethodSettings): Record<string, string>;
    /** Checking the sign-in for this method, after the forward-auth check. */
    check?(context: MethodCheckContext): Promise<MethodCheck>;
}
