/**
 * How a visitor is known inside an app: the sign-in methods (the draft's `account`). A method is a file in
 * `plugins/sso/` whose default export is a `SignInMethod`; the file's name is the method's name.
 */
import type { HostConfig } from '../../lib/config.ts';
import type {
    IdentityProvider,
    OidcClient,
    OidcClientChanges,
    OidcEndpoints,
    SamlApp,
    SamlChanges,
    SamlEndpoints,
} from '../idp/idp-types.ts';
import type { SiteSpec } from '../deploy/domain/nginx/site-types.ts';

export type MethodNeed = 'adminUser' | 'samlAcs' | 'sharedUser' | 'sharedPassword';

/** What a method works with: the app and the draft's fields it needs (the shared password opened, in runs only). */
export interface MethodSettings {
    app: string;
    domain: string;
    /** The app's URL as visitors reach it, with its port when not the default. */
    origin: string;
    /** Where nginx's requests reach the deployed app from (its network's gateway); unknown before a deploy. */
    gateway?: string;
    adminUser?: string;
    /** The admin account's e-mail at the identity provider, looked up when a run fills `{{ADMIN_EMAIL}}`. */
    adminEmail?: string;
    samlAcs?: string;
    /** The service provider's entity ID the assertions are for; the one its requests name when unset. */
    samlAudience?: string;
    sharedUser?: string;
    sharedPassword?: string;
    /** The connected identity provider's URL. */
    idpUrl?: string;
    /** The auto-login adapter and the app's login page (found by the adapter when not given). */
    login?: { adapter: string; path?: string };
    /**
     * Where nginx reaches Gatehouse's auto-login, the app's token for it (opened in runs only), and the folders of
     * auto-login adapters besides plugins/sso/autologin/ (AUTOLOGIN_ADAPTERS_DIRS).
     */
    autologin?: { gatehouseUrl: string; token?: string; adapterDirs?: string[] };
    /** The app's OpenID client, when the provider is connected; the secret only where it may be shown or used. */
    oidc?: { endpoints: OidcEndpoints; clientId: string; clientSecret?: string };
    /** The app's recipe, when it says how to set this method up in the app: what it changes and what it asks to do by hand. */
    recipe?: { id: string; title: string; env: Record<string, string>; remove: string[]; steps: string[]; redirect?: string };
    /** The app's SAML provider, when the provider is connected; its certificate when the caller asked for it. */
    saml?: { endpoints: SamlEndpoints; certificate?: string };
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

/** The identity provider's side of a run, for a method that makes objects there. */
export interface MethodProviderContext {
    provider: IdentityProvider;
    settings: MethodSettings;
    /** The app's title, its groups and the flows and key the connection chose. */
    access: { title: string; groups: string[]; authorizationFlow: string; invalidationFlow: string; signingKey: string | null };
    log(text: string, level?: 'info' | 'warning'): void;
}

/**
 * What a method makes at the provider. The run registers `undo` before it calls `apply`, and `undo` puts back what
 * `apply` changed, also when `apply` threw half-way; the run records `objectName` as the app's.
 */
export interface MethodProviderWork {
    objectName: string;
    /** `recorded` is awaited each time the work has learnt what it is about to change (as the adapter's ensure calls). */
    apply(recorded?: () => Promise<void>): Promise<void>;
    /** Puts the provider back as it was; answers what it did, in words. */
    undo(): Promise<string>;
    /** What the undo needs, kept current by apply: the run journals it, so that a killed run is put back from it. */
    journal?: MethodWorkJournal;
}

/** A sign-in method's objects at the identity provider, as the run's journal keeps them (never with a secret). */
export type MethodWorkJournal =
    { kind: 'oidc'; client: OidcClient; changes: OidcClientChanges } | { kind: 'saml'; app: SamlApp; changes: SamlChanges };

export interface SignInMethod {
    title: string;
    /** Whether the visitor is known inside the app through the identity provider (own login is not). */
    singleSignOn: boolean;
    /**
     * The last resort (auto-login's one shared account for everyone): offered among the first choices only when no
     * other single sign-on method is known for the app.
     */
    lastResort?: boolean;
    /** Draft fields the method cannot work without. */
    needs: MethodNeed[];
    /** The method works only with a recipe for it: the recipe holds the app's own setting (turning its login off). */
    needsRecipe?: boolean;
    /** The site as the run writes it, forward auth in place. The file is root's alone (0600), so credentials may go in. */
    site?(spec: SiteSpec, settings: MethodSettings): SiteSpec;
    /** Variables the method keeps in the app's secrets file, made when the app has none yet (a client's id and secret). */
    secrets?(existing: Record<string, string>): Record<string, string>;
    /** The making or updating of the method's objects at the identity provider, in the run, after forward auth's. */
    atProvider?(context: MethodProviderContext): MethodProviderWork;
    /** The values shown on the app (`identity.values`); a secret only when `settings` carries it opened. */
    values(settings: MethodSettings): Record<string, string>;
    /** Checking the sign-in for this method, after the forward-auth check. */
    check?(context: MethodCheckContext): Promise<MethodCheck>;
}
