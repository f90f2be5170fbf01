/**
 * The identity provider's side of a run: the app's forward-auth objects made or brought up to date (and undone
 * when the run fails), the sign-in checked through nginx, and the objects removed with the app.
 */
import { withNamedLock } from '../../../../lib/named-lock.ts';
import { loadIdpKind } from '../../../idp/idp-kinds.ts';
import { loadMethod } from '../../../sso/methods.ts';
import type { ForwardAuthApp, ForwardAuthChanges, IdentityProvider } from '../../../idp/idp-types.ts';
import type { MethodProviderWork } from '../../../sso/method-types.ts';
import { checkSignIn, siteAddress } from '../access/sign-in-check.ts';
import type { RunAccess, RunContext } from './run-context.ts';

export const SIGN_IN_STEP = 'sign-in';
export const METHOD_STEP = 'sign-in-method';

/** `dp-<app>`: the proxy provider's name and the application's slug. */
export function accessObjectName(app: string): string {
    return `dp-${app}`;
}

export interface AppliedAccess {
    provider: IdentityProvider;
    app: ForwardAuthApp;
    /** What forward auth's objects changed; none when the app has no forward auth (ownDoor). */
    changes: ForwardAuthChanges | null;
}

async function providerFor(access: RunAccess): Promise<IdentityProvider> {
    const kind = await loadIdpKind(access.connection.kind);
    return kind.connect({ url: access.connection.url, token: access.connection.token });
}

function forwardAuthApp(context: RunContext, access: RunAccess, https: boolean): ForwardAuthApp {
    const { origin } = siteAddress({ host: context.config.host, domain: context.data.domain, https });
    return {
        objectName: accessObjectName(context.data.app),
        title: access.title,
        externalHost: origin,
        launchUrl: `${origin}/`,
        authorizationFlow: access.connection.authorizationFlow,
        invalidationFlow: access.connection.invalidationFlow,
        outpost: access.connection.outpost,
        groups: access.groups,
    };
}

/** Makes (or updates) the app's provider, application, group bindings and outpost entry; records them as the app's. */
export async function applyAccess(context: RunContext, https: boolean): Promise<AppliedAccess | undefined> {
    const access = context.data.access;
    context.step = 'access';
    if (!access) {
        context.log('No identity provider is connected: the app is public, anyone who reaches its domain gets in', 'warning');
        return undefined;
    }

    const provider = await providerFor(access);
    const app = forwardAuthApp(context, access, https);
    if (access.ownDoor) {
        context.log(
            "Access: no forward auth in front (the recipe's ownDoor): the app's own OpenID sign-in is the door, and its client admits only the app's groups",
        );
        return { provider, app, changes: null };
    }

    const knex = await context.database();
    const changes = await provider.ensureForwardAuthApp(app, (key, work) => withNamedLock(knex, key, work));
    await context.recordResource('access', app.objectName);
    const made = changes.providerCreated ? 'made' : 'updated';
    const who = access.groups.length > 0 ? `${access.groups.length} group(s) bound` : 'no groups bound: every signed-in user passes';
    context.log(
        `Access: proxy provider ${app.objectName} ${made} for ${app.externalHost} (forward_single), application ${app.objectName}, ${who}`,
    );
    if (changes.addedToOutpost) {
        context.log('Access: the provider was added to the outpost');
    }

    if (access.openLocations && access.openLocations.length > 0) {
        context.log(`Access: hand-written locations stay open to anyone: ${access.openLocations.join(', ')}`, 'warning');
    }

    return { provider, app, changes };
}

/** Makes (or updates) what the app's sign-in method needs at the provider, after forward auth's objects. */
export async function applyMethodAtProvider(
    context: RunContext,
    applied: AppliedAccess | undefined,
): Promise<MethodProviderWork | undefined> {
    const { signIn, access } = context.data;
    const method = signIn ? await loadMethod(signIn.method) : undefined;
    if (!applied || !signIn || !access || !method?.atProvider) {
        return undefined;
    }

    context.step = 'access';
    const { connection } = access;
    const work = await method.atProvider({
        provider: applied.provider,
        settings: signIn.settings,
        access: {
            title: access.title,
            groups: access.groups,
            authorizationFlow: connection.authorizationFlow,
            invalidationFlow: connection.invalidationFlow,
            signingKey: connection.signingKey,
        },
        log: (text, level) => context.log(text, level),
    });
    await context.recordResource('access', work.objectName);
    return work;
}

export async function undoMethodAtProvider(context: RunContext, work: MethodProviderWork): Promise<string> {
    const undone = await work.undo();
    if (work.created) {
        await context.forgetResource('access', work.objectName);
    }

    return undone;
}

/** Puts the provider back as it was before the run; answers what was undone. */
export async function undoAccess(context: RunContext, applied: AppliedAccess): Promise<string> {
    if (!applied.changes) {
        return 'forward auth had not been set up';
    }

    await applied.provider.undoForwardAuthApp(applied.app, applied.changes);
    if (applied.changes.providerCreated) {
        await context.forgetResource('access', applied.app.objectName);
        return `removed ${applied.app.objectName} from the identity provider`;
    }

    return `put ${applied.app.objectName} back as it was at the identity provider`;
}

/** Checking the sign-in, after a deploy: a failure is a warning with a fix, since the app itself is up. */
export async function checkSignInStep(context: RunContext, https: boolean): Promise<void> {
    if (!context.data.access) {
        return;
    }

    context.step = SIGN_IN_STEP;
    if (context.data.access.ownDoor) {
        context.log("Checking the sign-in: no forward auth by design (ownDoor); the app's OpenID sign-in is checked next");
        return;
    }

    const result = await checkSignIn({ host: context.config.host, domain: context.data.domain, https });
    if (result.ok) {
        context.log(`Checking the sign-in: ${result.text}`);
    } else {
        context.log(`Checking the sign-in: ${result.text}. Fix: ${result.fix}`, 'warning');
    }
}

/**
 * Checking the sign-in of the app's method (the account inside the app). After a deploy a failure is a warning with
 * a fix; a run that changes the method fails on it, so that its rollback puts the previous method back.
 */
export async function checkMethodStep(context: RunContext, https: boolean): Promise<void> {
    const signIn = context.data.signIn;
    const site = context.data.files?.site;
    if (!context.data.access || !signIn || site === undefined) {
        return;
    }

    const method = await loadMethod(signIn.method);
    if (!method?.check) {
        return;
    }

    context.step = METHOD_STEP;
    const result = await method.check({ settings: signIn.settings, host: context.config.host, https, site });
    if (result.ok) {
        context.log(`Checking the sign-in (${method.title}): ${result.text}`);
    } else if (context.data.kind === 'sso') {
        throw new Error(`Checking the sign-in (${method.title}): ${result.text}. Fix: ${result.fix}`);
    } else {
        context.log(`Checking the sign-in (${method.title}): ${result.text}. Fix: ${result.fix}`, 'warning');
    }
}

/** A delete with removeAccess: the app's provider and application (and so its bindings and outpost entry). */
export async function removeAccessObjects(context: RunContext): Promise<void> {
    context.step = 'access';
    const recorded = await context.resources('access');
    if (recorded.length === 0) {
        context.log('Access: no identity-provider objects were made for this app, so there is nothing to remove');
        return;
    }

    const access = context.data.access;
    if (!access) {
        context.log(`Access: no identity provider is connected, so ${recorded.join(', ')} stay at the provider`, 'warning');
        return;
    }

    const provider = await providerFor(access);
    for (const objectName of recorded) {
        const removed = await provider.removeApplication(objectName);
        await context.forgetResource('access', objectName);
        context.log(`Access: removed ${removed.length > 0 ? removed.join(' and ') : `nothing (${objectName} was already gone)`}`);
    }
}
