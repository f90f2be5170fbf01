/**
 * The identity provider's side of a run: the app's forward-auth objects made or brought up to date (and undone
 * when the run fails), the sign-in checked through nginx, and the objects removed with the app.
 */
import { withNamedLock } from '../../../../lib/named-lock.ts';
import { loadIdpKind } from '../../../idp/idp-kinds.ts';
import { loadMethod } from '../../../sso/methods.ts';
import { type ForwardAuthApp, type IdentityProvider, noForwardAuthChanges } from '../../../idp/idp-types.ts';
import type { MethodCheckHelpers } from '../../../sso/method-types.ts';
import { undoneText } from '../../../sso/provider-work.ts';
import { checkSignIn, siteAddress } from '../access/sign-in-check.ts';
import { checkHttp } from '../host/http-check.ts';
import { readSite, siteUpstreams } from '../nginx/site-model.ts';
import type { RunAccess, RunContext } from './run-context.ts';
import type { JournalEntry } from './run-journal.ts';

export const SIGN_IN_STEP = 'sign-in';
export const METHOD_STEP = 'sign-in-method';

/** What a sign-in method's check is lent (plugins/sso imports nothing of the deploy manager): the site model's reader, the HTTP check. */
export const methodCheckHelpers: MethodCheckHelpers = { readSite: (site) => readSite(site).spec, siteUpstreams, checkHttp };

/** `dp-<app>`: the proxy provider's name and the application's slug. */
export function accessObjectName(app: string): string {
    return `dp-${app}`;
}

export interface AppliedAccess {
    provider: IdentityProvider;
    app: ForwardAuthApp;
}

/**
 * The undo of what a run makes at the identity provider. Each step is registered before the adapter call whose
 * changes it puts back, so that a call that throws half-way is undone too; the last registered runs first.
 */
export class ProviderUndo {
    readonly #steps: Array<() => Promise<string>> = [];

    get empty(): boolean {
        return this.#steps.length === 0;
    }

    add(step: () => Promise<string>): void {
        this.#steps.unshift(step);
    }

    /** Runs every step, even after one fails; answers what they did, in words, or throws with every failure. */
    async run(): Promise<string> {
        const done: string[] = [];
        const failed: string[] = [];
        for (const step of this.#steps) {
            try {
                done.push(await step());
            } catch (error) {
                failed.push((error as Error).message);
            }
        }

        if (failed.length > 0) {
            throw new Error(`${failed.join('; ')}${done.length > 0 ? ` (undone: ${done.join('; ')})` : ''}`);
        }

        return done.join('; ');
    }
}

/**
 * Records `objectName` as the app's and registers its undo, before the call that makes it: should the undo fail,
 * the object stays recorded, so that deleting the app removes it. A successful undo forgets it unless it was the app's before.
 */
async function registerWork(
    context: RunContext,
    undo: ProviderUndo,
    objectName: string,
    putBack: () => Promise<string>,
    described: Pick<Extract<JournalEntry, { type: 'access' }>, 'forwardAuth' | 'method'> = {},
): Promise<() => Promise<void>> {
    const before = await context.resources('access');
    const entry: JournalEntry = { type: 'access', objectName, existed: before.includes(objectName), ...described };
    const journalled = await context.journal(entry);
    await context.recordResource('access', objectName);
    undo.add(async () => {
        const done = await putBack();
        if (!before.includes(objectName)) {
            await context.forgetResource('access', objectName);
        }

        return done;
    });
    // The entry again, with what its `changes` (kept by reference) have learnt since.
    return async () => await context.rejournal(journalled, entry);
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
export async function applyAccess(context: RunContext, https: boolean, undo: ProviderUndo): Promise<AppliedAccess | undefined> {
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
        return { provider, app };
    }

    const knex = await context.database();
    const changes = noForwardAuthChanges(app.objectName);
    const recorded = await registerWork(
        context,
        undo,
        app.objectName,
        async () => {
            await provider.undoForwardAuthApp(app, changes);
            return undoneText(app.objectName, changes);
        },
        { forwardAuth: { app, changes } },
    );
    await provider.ensureForwardAuthApp(app, (key, work) => withNamedLock(knex, key, work), changes, recorded);
    await context.pauseIfAsked('access-made');
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

    return { provider, app };
}

/** Makes (or updates) what the app's sign-in method needs at the provider, after forward auth's objects. */
export async function applyMethodAtProvider(context: RunContext, applied: AppliedAccess | undefined, undo: ProviderUndo): Promise<void> {
    const { signIn, access } = context.data;
    const method = signIn ? await loadMethod(signIn.method) : undefined;
    if (!applied || !signIn || !access || !method?.atProvider) {
        return;
    }

    context.step = 'access';
    const { connection } = access;
    const work = method.atProvider({
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
    const recorded = await registerWork(context, undo, work.objectName, () => work.undo(), work.journal ? { method: work.journal } : {});
    await work.apply(recorded);
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
    const result = await method.check({ ...methodCheckHelpers, settings: signIn.settings, host: context.config.host, https, site });
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
