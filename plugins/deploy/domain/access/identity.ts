/**
 * How a visitor is known inside an app (`identity`): the method chosen, the methods to choose from, the values a
 * person needs for a method done by hand (never a secret), and the last "Checking the sign-in".
 */
import type { Server } from '@hapi/hapi';

import type { HostConfig } from '../../../../lib/config.ts';
import { toRfc3339 } from '../../../../lib/database.ts';
import { idpConnection } from '../../../idp/connection-service.ts';
import { loadIdpKind } from '../../../idp/idp-kinds.ts';
import { CLIENT_ID_VARIABLE, CLIENT_SECRET_VARIABLE, type MethodSettings, type SignInMethod } from '../../../sso/method-types.ts';
import { loadMethod, methodNames } from '../../../sso/methods.ts';
import { type AppRecord, apps } from '../apps/app-service.ts';
import { type Detection, type Evidence, evidence } from '../evidence/evidence-service.ts';
import { appliedRecipeProblems } from '../recipes/recipe-files.ts';
import { recipes } from '../recipes/recipe-service.ts';
import type { Recipe } from '../recipes/recipe-types.ts';
import { METHOD_STEP, SIGN_IN_STEP } from '../engine/access-steps.ts';
import { siteHasTls } from '../nginx/site-model.ts';
import { appGateway, dockerClient } from '../host/docker-client.ts';
import { siteAddress } from './sign-in-check.ts';

type OptionSection = 'recommended' | 'evidence' | 'last-resort' | 'more' | 'own';
const SECTION_ORDER: OptionSection[] = ['recommended', 'evidence', 'last-resort', 'more', 'own'];

/** Where a method goes in the account list (the seed's order), from what speaks for it. */
function sectionOf(method: SignInMethod | undefined, found: Evidence | undefined, ssoKnown: boolean, recipeUsable: boolean): OptionSection {
    if (method && !method.singleSignOn) {
        return 'own';
    }

    if (found?.flags.recipe && found.level === 'tested' && !found.flags.paidOnly && recipeUsable) {
        return 'recommended';
    }

    // One shared account for everyone: the last resort, and only when no single sign-on method is known at all.
    if (method?.lastResort) {
        return ssoKnown ? 'more' : 'last-resort';
    }

    return found ? 'evidence' : 'more';
}

/**
 * What applying the recipe changes in the app, for a person to review before choosing it: where it comes from, the
 * paths and variables it sets, the steps and commands, and why it cannot be applied when it fails the checks.
 */
function recipeChanges(recipe: Recipe) {
    return {
        recipe: recipe.id,
        title: recipe.title,
        from:
            recipe.origin.kind === 'saved'
                ? `saved from the app ${recipe.origin.app} by ${recipe.origin.savedBy} on ${recipe.origin.savedAt}`
                : 'a recipe file',
        ...(recipe.login ? { login: recipe.login } : {}),
        ...(recipe.samlAcs ? { samlAcs: recipe.samlAcs } : {}),
        ...(recipe.redirect ? { redirect: recipe.redirect } : {}),
        env: recipe.env ?? {},
        remove: recipe.remove ?? [],
        steps: recipe.steps ?? [],
        init: recipe.init ?? [],
        problems: appliedRecipeProblems(recipe),
    };
}

/**
 * The methods to choose from, in the seed's order: the tested recipe (recommended); every method with evidence,
 * with its level and sources; auto-login with a shared account as the last resort when no single sign-on method is
 * known; the rest (behind "more"); the app's own login apart, as it is not single sign-on.
 */
async function options(detection: Detection, recipe: Recipe | undefined) {
    const byMethod = new Map(detection.evidence.map((item) => [item.method, item]));
    const names = methodNames();
    const methods = await Promise.all(names.map((name) => loadMethod(name)));
    const plugins = new Map(names.map((name, index) => [name, methods[index]]));
    const ssoKnown = detection.evidence.some((item) => {
        const method = plugins.get(item.method);
        return method?.singleSignOn === true && !method.lastResort && !item.flags.paidOnly;
    });
    // A method that works only with a recipe for it (none) is offered only when the app's recipe is for it: the API refuses it otherwise.
    const offered = names.flatMap((name, index) =>
        methods[index]?.needsRecipe && recipe?.method !== name ? [] : [{ name, method: methods[index] }],
    );
    const listed = offered.map(({ name, method }) => {
        const found = byMethod.get(name);
        const applies = recipe?.method === name ? recipeChanges(recipe) : undefined;
        const section = sectionOf(method, found, ssoKnown, (applies?.problems.length ?? 0) === 0);
        return {
            method: name,
            title: method?.title ?? name,
            singleSignOn: method?.singleSignOn ?? false,
            needs: method?.needs ?? [],
            section,
            level: found?.level ?? null,
            sources: found?.sources ?? [],
            paidOnly: found?.flags.paidOnly ?? false,
            recommended: section === 'recommended',
            ...(applies ? { applies } : {}),
        };
    });
    const evidenceRank = (method: string) => detection.evidence.findIndex((item) => item.method === method);
    return listed.sort(
        (a, b) => SECTION_ORDER.indexOf(a.section) - SECTION_ORDER.indexOf(b.section) || evidenceRank(a.method) - evidenceRank(b.method),
    );
}

/** Evidence that names no method of ours (LDAP), shown as information. */
function information(detection: Detection) {
    return detection.evidence.filter((item) => item.flags.informationOnly).map((item) => ({ method: item.method, sources: item.sources }));
}

/**
 * The last sign-in check of the app's runs that succeeded: the method's own when it has one, else forward auth's.
 * A rolled-back run's check was of a method that is no longer in force.
 */
export async function lastCheck(server: Server, app: string) {
    const row = await server.app
        .knex('dp_run_events')
        .join('dp_runs', 'dp_runs.id', 'dp_run_events.run_id')
        .where('dp_runs.app_name', app)
        .where('dp_runs.state', 'succeeded')
        .whereIn('dp_run_events.step', [SIGN_IN_STEP, METHOD_STEP])
        .orderBy([
            { column: 'dp_run_events.run_id', order: 'desc' },
            { column: 'dp_run_events.seq', order: 'desc' },
        ])
        .first('dp_run_events.level', 'dp_run_events.text', 'dp_run_events.at');
    return row ? { ok: row.level === 'info', text: String(row.text), at: toRfc3339(Number(row.at)) } : null;
}

/** What the run, or the caller, may see opened: the shared password, the OpenID client's secret. */
export interface OpenedSecrets {
    sharedPassword?: string;
    clientSecret?: boolean;
    autologinToken?: string;
    /** Look the admin account's e-mail up at the identity provider (for a run's placeholders). */
    adminEmail?: boolean;
    /** Read the SAML provider's certificate from the identity provider (for the values shown, not for runs). */
    samlCertificate?: boolean;
    /** Ask the Docker engine for the app network's gateway (for the header method's values shown, not for runs). */
    gateway?: boolean;
}

/** The method that applies to an app, and its recipe when the recipe says how to set that method up in the app. */
export interface AppliedMethod {
    /** The account value in force: the draft's, or its recipe's method when the draft's is empty or `recipe`. */
    method: string;
    recipe?: Recipe;
}

export async function appliedMethod(server: Server, app: AppRecord): Promise<AppliedMethod> {
    const account = app.draft.account ?? '';
    const recipe = await recipes(server).forApp(app);
    const method = account === '' || account === 'recipe' ? (recipe?.method ?? '') : account;
    return { method, ...(recipe && recipe.method === method ? { recipe } : {}) };
}

/** The name of the method's own objects at the identity provider for the app, through the loader; undefined when it makes none. */
async function methodObjectName(method: string, app: string): Promise<string | undefined> {
    return (await loadMethod(method))?.providerObjects?.name(app);
}

/** The app's OpenID client as its secrets and the connected provider describe it; only when its method is OpenID Connect. */
async function oidcOf(server: Server, app: AppRecord, method: string, revealSecret: boolean): Promise<MethodSettings['oidc']> {
    const connection = method === 'oidc' ? await idpConnection(server).stored() : undefined;
    if (!connection) {
        return undefined;
    }

    // Opened only for an app signed in with OpenID Connect, whose client ID (not a secret) is shown.
    const secrets = await apps(server).secretsOf(app.name);
    const clientId = secrets[CLIENT_ID_VARIABLE];
    if (!clientId) {
        return undefined;
    }

    const objectName = await methodObjectName(method, app.name);
    if (!objectName) {
        return undefined;
    }

    const endpoints = (await loadIdpKind(connection.kind)).oidcEndpoints(connection.url, objectName);
    const clientSecret = secrets[CLIENT_SECRET_VARIABLE];
    return { endpoints, clientId, ...(revealSecret && clientSecret ? { clientSecret } : {}) };
}

/** The app's SAML provider as the connected provider names it; only when its method is SAML. */
async function samlOf(server: Server, app: AppRecord, method: string, withCertificate: boolean): Promise<MethodSettings['saml']> {
    const connection = await idpConnection(server).stored();
    const objectName = method === 'saml' && connection ? await methodObjectName(method, app.name) : undefined;
    if (!connection || !objectName) {
        return undefined;
    }

    const endpoints = (await loadIdpKind(connection.kind)).samlEndpoints(connection.url, objectName);
    if (!withCertificate) {
        return { endpoints };
    }

    // The values are shown even when the provider does not answer; the certificate is then left out.
    const certificate = await idpConnection(server)
        .client()
        .then((provider) => provider.samlCertificate(objectName))
        .catch(() => null);
    return { endpoints, ...(certificate ? { certificate } : {}) };
}

/** The e-mail the identity provider has for the admin account; undefined when it has none or does not answer. */
async function adminEmailOf(server: Server, adminUser: string | undefined): Promise<string | undefined> {
    if (!adminUser || !(await idpConnection(server).active())) {
        return undefined;
    }

    const users = await (await idpConnection(server).client()).users(adminUser).catch(() => []);
    return users.find((user) => user.username === adminUser)?.email || undefined;
}

/** What a sign-in method works with, from the app's draft; secrets opened only where `opened` says. */
export async function methodSettingsOf(server: Server, app: AppRecord, opened: OpenedSecrets = {}): Promise<MethodSettings> {
    const host: HostConfig = server.app.config.host;
    const connection = await idpConnection(server).stored();
    const { method, recipe } = await appliedMethod(server, app);
    const oidc = await oidcOf(server, app, method, opened.clientSecret === true);
    const saml = await samlOf(server, app, method, opened.samlCertificate === true);
    const adminEmail = opened.adminEmail ? await adminEmailOf(server, app.draft.adminUser) : undefined;
    const samlAcs = app.draft.samlAcs ?? recipe?.samlAcs;
    const login = app.draft.login ?? recipe?.login;
    // Asked of the engine only where it is shown: the header method's trusted address.
    const gateway = opened.gateway && method === 'header' && app.state !== 'draft' ? await appGateway(dockerClient(), app.name) : undefined;
    return {
        app: app.name,
        domain: app.domain,
        origin: siteAddress({ host, domain: app.domain, https: siteHasTls(app.draft.nginx) }).origin,
        ...(gateway ? { gateway } : {}),
        ...(app.draft.adminUser ? { adminUser: app.draft.adminUser } : {}),
        ...(adminEmail ? { adminEmail } : {}),
        ...(samlAcs ? { samlAcs } : {}),
        ...(app.draft.samlAudience ? { samlAudience: app.draft.samlAudience } : {}),
        ...(app.draft.sharedUser ? { sharedUser: app.draft.sharedUser } : {}),
        ...(opened.sharedPassword ? { sharedPassword: opened.sharedPassword } : {}),
        ...(connection ? { idpUrl: connection.url } : {}),
        ...(oidc ? { oidc } : {}),
        ...(saml ? { saml } : {}),
        ...(login ? { login } : {}),
        ...(recipe ? { recipe: recipeShown(recipe) } : {}),
        autologin: {
            gatehouseUrl: `http://127.0.0.1:${server.info.port}`,
            adapterDirs: server.app.config.apps.autologinAdapterDirs,
            ...(opened.autologinToken ? { token: opened.autologinToken } : {}),
        },
    };
}

function recipeShown(recipe: Recipe): NonNullable<MethodSettings['recipe']> {
    return {
        id: recipe.id,
        title: recipe.title,
        env: recipe.env ?? {},
        remove: recipe.remove ?? [],
        steps: recipe.steps ?? [],
        ...(recipe.redirect ? { redirect: recipe.redirect } : {}),
    };
}

type KnownOptions = { options: Awaited<ReturnType<typeof options>>; information: ReturnType<typeof information> };

const KEPT_IDENTITIES = 1000;
/** The options and information of each image reference and recipe, per server, while the recipes stay the same. */
const keptIdentities = new WeakMap<Server, Map<string, { recipesVersion: object; known: Promise<KnownOptions> }>>();

/**
 * The methods to choose from and the information, worked out once per image reference (image and tag) and recipe,
 * and kept until a recipe is saved (the recipes' version) or the app's image, tag or recipe changes.
 */
async function knownOptions(server: Server, app: AppRecord, recipe: Recipe | undefined): Promise<KnownOptions> {
    const recipesVersion = await recipes(server).version();
    const key = JSON.stringify([app.image ?? app.name, app.tag, recipe?.id ?? null]);
    const kept = keptIdentities.get(server) ?? new Map<string, { recipesVersion: object; known: Promise<KnownOptions> }>();
    keptIdentities.set(server, kept);
    const entry = kept.get(key);
    if (entry && entry.recipesVersion === recipesVersion) {
        return await entry.known;
    }

    const known = (async () => {
        // What the image's own documentation says (registry description, OCI labels, README): read through the hub's caches.
        const found = app.image ? await evidence(server).foundInDocs(`${app.image}:${app.tag || 'latest'}`) : [];
        const detection = await evidence(server).detect(app.image ?? app.name, found, recipe);
        return { options: await options(detection, recipe), information: information(detection) };
    })();
    known.catch(() => kept.delete(key));
    if (kept.size >= KEPT_IDENTITIES) {
        kept.delete(kept.keys().next().value as string);
    }

    kept.set(key, { recipesVersion, known });
    return known;
}

/** `revealSecrets`: the caller may see the app's secrets (editors and admins), so the OpenID client secret too. */
export async function describeIdentity(server: Server, app: AppRecord, revealSecrets: boolean) {
    const account = app.draft.account ?? '';
    const applied = await appliedMethod(server, app);
    const known = await knownOptions(server, app, await recipes(server).forApp(app));
    const method = applied.method === '' ? undefined : await loadMethod(applied.method);
    return {
        account,
        method: applied.method,
        recipe: applied.recipe ? { id: applied.recipe.id, title: applied.recipe.title, level: applied.recipe.level } : null,
        adminUser: app.draft.adminUser ?? null,
        options: known.options,
        information: known.information,
        values: method
            ? method.values(await methodSettingsOf(server, app, { clientSecret: revealSecrets, samlCertificate: true, gateway: true }))
            : {},
        check: await lastCheck(server, app.name),
    };
}
