/**
 * Starting the runs that change the host. Everything a person can fix is checked here, before a run starts
 * and before anything is saved (422); the run itself executes jobs/app-run.ts in a worker.
 */
import Path from 'node:path';

import type { Server } from '@hapi/hapi';

import { ConflictError, forField, ValidationError } from '../../../../lib/errors.ts';
import { defineService } from '../../../../lib/services.ts';
import { ROOT_DIR } from '../../../../server.ts';
import type { DeployUser } from '../accounts/user-service.ts';
import { renderSecretsFile } from '../apps/app-files.ts';
import { type AppRecord, apps } from '../apps/app-service.ts';
import { hasUnacceptedRisks, lintCompose, lintContextFor, parseCompose, renderCompose, validateCompose } from '../compose/compose-model.ts';
import { modelFromJson } from '../compose/compose-read.ts';
import { idpConnection } from '../../../idp/connection-service.ts';
import { loadMethod, methodNames } from '../../../sso/methods.ts';
import { fillPlaceholders, openedSecretValues, placeholderValues } from '../../../sso/placeholders.ts';
import { adapterNames } from '../../../sso/autologin/adapters.ts';
import { appAccess } from '../access/access-service.ts';
import { appliedMethod, methodSettingsOf } from '../access/identity.ts';
import { composeWithRecipe } from '../recipes/recipe-compose.ts';
import { recipes } from '../recipes/recipe-service.ts';
import { needsAdminUser, recipeNeeds } from '../recipes/recipe-types.ts';
import type { AccountMethod } from '../apps/draft-shape.ts';
import type { AppAction, AppRunData, AppRunKind, DeleteOptions } from '../engine/run-context.ts';
import type { Finding } from '../findings/finding.ts';
import { checkSite, parseSite, protectSite, renderSite, type SiteSpec, sitePlaces } from '../nginx/site-model.ts';
import { type RunState, runs } from '../runs/run-service.ts';

const RUN_SCRIPT = Path.join(ROOT_DIR, 'jobs', 'app-run.ts');

export interface ComposeUpdate {
    mode: 'model' | 'text';
    spec?: unknown;
    text?: string;
    secrets?: Record<string, string>;
    acceptRisks?: boolean;
}

export interface SiteUpdate {
    mode: 'model' | 'text';
    spec?: SiteSpec;
    text?: string;
}

export interface SignInChange {
    account?: string;
    adminUser?: string;
    samlAcs?: string;
    samlAudience?: string;
    sharedUser?: string;
    sharedPassword?: string;
    login?: { adapter: string; path?: string };
    acceptRisks?: boolean;
}

export type DeleteRequest = Partial<DeleteOptions> & { confirm: string };

function describe(findings: Finding[]): string {
    return findings.map((finding) => `${finding.path}: ${finding.message}`).join('; ');
}

/** The model or the text, whichever the mode names; the other must not be sent. */
function pick<T>(mode: 'model' | 'text', spec: T | undefined, text: string | undefined): { spec?: T; text?: string } {
    if (mode === 'model' && (spec === undefined || text !== undefined)) {
        throw new ValidationError('spec: mode model takes spec (and no text)');
    }

    if (mode === 'text' && (text === undefined || spec !== undefined)) {
        throw new ValidationError('text: mode text takes text (and no spec)');
    }

    return mode === 'model' ? { spec } : { text };
}

export class LifecycleService {
    readonly #server: Server;

    constructor(server: Server) {
        this.#server = server;
    }

    async deploy(name: string, actor: DeployUser, acceptRisks = false): Promise<number> {
        const app = await apps(this.#server).require(name);
        await this.#refuseWhileRunning(app.name);
        await this.#checkCompose(app.name, app.draft.compose, await apps(this.#server).secretsOf(app.name), acceptRisks);
        return await this.#startWithFiles(await this.#withAdminUser(app, actor), 'deploy', actor);
    }

    async updateCompose(name: string, actor: DeployUser, update: ComposeUpdate): Promise<number> {
        const app = await apps(this.#server).require(name);
        const chosen = pick(update.mode, update.spec, update.text);
        const text = chosen.text ?? renderCompose(forField('spec', () => modelFromJson(chosen.spec)));
        const secrets = { ...(await apps(this.#server).secretsOf(app.name)), ...(update.secrets ?? {}) };
        await this.#refuseWhileRunning(app.name);
        await this.#checkCompose(app.name, text, secrets, update.acceptRisks === true);
        const saved = await apps(this.#server).saveDraft(app.name, {
            compose: text,
            composeEditor: update.mode,
            ...(update.secrets ? { secrets: update.secrets } : {}),
        });
        return await this.#startWithFiles(saved, 'compose', actor);
    }

    async updateSite(name: string, actor: DeployUser, update: SiteUpdate): Promise<number> {
        const app = await apps(this.#server).require(name);
        const chosen = pick(update.mode, update.spec, update.text);
        const text = chosen.text ?? forField('spec', () => renderSite(chosen.spec as SiteSpec));
        const places = sitePlaces(this.#server.app.config, { name: app.name, domain: app.domain });
        const errors = checkSite(forField(update.mode === 'model' ? 'spec' : 'text', () => parseSite(text, places)).spec, places).filter(
            (finding) => finding.level === 'error',
        );
        if (update.mode === 'model' && errors.length > 0) {
            throw new ValidationError(describe(errors));
        }

        await this.#refuseWhileRunning(app.name);
        const saved = await apps(this.#server).saveDraft(app.name, { nginx: text, nginxEditor: update.mode });
        return await this.#startWithFiles(saved, 'nginx', actor);
    }

    async act(name: string, actor: DeployUser, action: AppAction): Promise<number> {
        const app = await apps(this.#server).require(name);
        if (app.state === 'draft') {
            throw new ValidationError(`${app.name} has not been deployed yet: deploy it first`);
        }

        return await this.#start(app, 'action', actor, { action }, async (state) => {
            if (state === 'succeeded') {
                await this.#setState(app.name, action === 'stop' ? 'stopped' : 'running');
            }
        });
    }

    async remove(name: string, actor: DeployUser, request: DeleteRequest): Promise<number> {
        const app = await apps(this.#server).require(name);
        if (request.confirm !== app.name) {
            throw new ValidationError(`confirm: type the app's name (${app.name}) to delete it`);
        }

        const options: DeleteOptions = {
            deleteData: request.deleteData === true,
            removeDns: request.removeDns === true,
            removeCert: request.removeCert === true,
            removeAccess: request.removeAccess === true,
            removeVolumes: request.removeVolumes === true,
            removeImages: request.removeImages === true,
            removeArchives: request.removeArchives === true,
            includePreexisting: request.includePreexisting === true,
            forgetHistory: request.forgetHistory === true,
        };
        const access = options.removeAccess ? await appAccess(this.#server).forRun(app) : undefined;
        // The run ends long after start() answers its id, so the id is set when onEnd reads it.
        const runId = await this.#start(app, 'delete', actor, { remove: options, ...(access ? { access } : {}) }, async (state) => {
            if (state === 'succeeded') {
                await this.#forgetApp(app.name, options.forgetHistory ? runId : undefined);
            }
        });
        return runId;
    }

    async #forgetApp(name: string, keepRun: number | undefined): Promise<void> {
        const knex = this.#server.app.knex;
        await knex('dp_app_resources').where({ app_name: name }).delete();
        await knex('dp_apps').where({ name }).delete();
        if (keepRun !== undefined) {
            await runs(this.#server).forget(name, keepRun);
        }
    }

    async #checkCompose(app: string, text: string, secrets: Record<string, string>, acceptRisks: boolean): Promise<void> {
        const spec = forField('compose', () => parseCompose(text));
        const errors = await validateCompose(spec, { secrets, checkHostPorts: false });
        if (errors.length > 0) {
            throw new ValidationError(`the compose file cannot be deployed: ${describe(errors)}`);
        }

        const findings = lintCompose(spec, lintContextFor(this.#server.app.config, { app, values: secrets }));
        if (!acceptRisks && hasUnacceptedRisks(findings)) {
            const risks = findings.filter((finding) => finding.level === 'risk');
            throw new ValidationError(`lint found risks; send acceptRisks: true to deploy anyway: ${describe(risks)}`);
        }
    }

    async #refuseWhileRunning(app: string): Promise<void> {
        if (await runs(this.#server).inProgress(app)) {
            throw new ConflictError(`another run is in progress for ${app}`);
        }
    }

    /**
     * The identity provider for the run, and the site with its forward-auth check (and what the app's sign-in method
     * adds to it) when the app goes behind it.
     */
    async #accessFor(app: AppRecord, kind: AppRunKind): Promise<Pick<AppRunData, 'access' | 'signIn'> & { site: string }> {
        const access = await appAccess(this.#server).forRun(app);
        const behind = kind !== 'nginx' || (await appAccess(this.#server).isBehindProvider(app.name));
        if (!access || !behind) {
            return { site: app.draft.nginx };
        }

        const places = sitePlaces(this.#server.app.config, { name: app.name, domain: app.domain });
        const signIn = await this.#signInFor(app);
        if ((await appliedMethod(this.#server, app)).recipe?.ownDoor) {
            return { access: { ...access, ownDoor: true }, ...(signIn ? { signIn } : {}), site: app.draft.nginx };
        }

        const method = signIn ? await loadMethod(signIn.method) : undefined;
        const addMethod = (spec: SiteSpec) => (method?.site && signIn ? method.site(spec, signIn.settings) : spec);
        const site = forField('nginx', () => protectSite(app.draft.nginx, access.connection.outpostUrl, places, addMethod));
        return { access: { ...access, openLocations: site.unprotected }, ...(signIn ? { signIn } : {}), site: site.text };
    }

    /** The app's sign-in method with what it needs, the shared password opened: for the run only. */
    async #signInFor(app: AppRecord): Promise<AppRunData['signIn']> {
        const { method } = await appliedMethod(this.#server, app);
        if (method === '' || !(await loadMethod(method))) {
            return undefined;
        }

        const sharedPassword = await apps(this.#server).sharedPasswordOf(app.name);
        const autologinToken = method === 'autologin' ? await apps(this.#server).autologinTokenOf(app.name) : undefined;
        const settings = await methodSettingsOf(this.#server, app, {
            ...(sharedPassword ? { sharedPassword } : {}),
            ...(autologinToken ? { autologinToken } : {}),
            clientSecret: true,
        });
        return { method, settings };
    }

    /** Sets the app's sign-in method and applies it in a run that rewrites, restarts and checks, rolled back on failure. */
    async changeSignIn(name: string, actor: DeployUser, change: SignInChange): Promise<number> {
        const app = await apps(this.#server).require(name);
        await this.#refuseWhileRunning(app.name);
        const account = change.account ?? '';
        const recipe = await recipes(this.#server).forApp(app);
        const methodName = account === '' || account === 'recipe' ? recipe?.method : account;
        if (!methodName) {
            throw new ValidationError(`account: no recipe applies to ${app.image ?? app.name}; choose a method`);
        }

        const method = await loadMethod(methodName);
        if (!method) {
            throw new ValidationError(`account: the ${methodName} method is not available; available: ${methodNames().join(', ')}`);
        }

        const recipeForMethod = recipe?.method === methodName ? recipe : undefined;
        if (method.needsRecipe && !recipeForMethod) {
            throw new ValidationError(
                `account: ${methodName} needs a recipe that says how ${app.image ?? app.name} turns its own login off, and no recipe for it does`,
            );
        }

        if (change.login && !adapterNames().includes(change.login.adapter)) {
            throw new ValidationError(
                `login.adapter: there is no auto-login adapter ${change.login.adapter}; available: ${adapterNames().join(', ')}`,
            );
        }

        if (!(await idpConnection(this.#server).active())) {
            throw new ValidationError('connect an identity provider first (/api/admin/idp): every method works behind its forward auth');
        }

        const { account: _account, sharedPassword, acceptRisks, ...fields } = change;
        const needsAdmin = recipeForMethod !== undefined && needsAdminUser(recipeForMethod);
        const known = {
            adminUser: fields.adminUser ?? app.draft.adminUser ?? (needsAdmin ? await this.#defaultAdminUser(actor) : undefined),
            samlAcs: fields.samlAcs ?? app.draft.samlAcs,
            sharedUser: fields.sharedUser ?? app.draft.sharedUser,
            sharedPassword: sharedPassword ?? (await apps(this.#server).sharedPasswordOf(app.name)),
        };
        const needs = [...new Set([...method.needs, ...(recipeForMethod ? recipeNeeds(recipeForMethod) : [])])];
        const missing = needs.filter((need) => !known[need]);
        if (missing.length > 0) {
            throw new ValidationError(`${missing.join(', ')}: the ${methodName} method needs ${missing.length > 1 ? 'them' : 'it'}`);
        }

        await this.#checkCompose(app.name, app.draft.compose, await apps(this.#server).secretsOf(app.name), acceptRisks === true);
        const previousPassword = await apps(this.#server).sharedPasswordOf(app.name);
        const previous = {
            account: app.draft.account ?? '',
            adminUser: app.draft.adminUser ?? '',
            samlAcs: app.draft.samlAcs ?? '',
            samlAudience: app.draft.samlAudience ?? '',
            sharedUser: app.draft.sharedUser ?? '',
            sharedPassword: previousPassword ?? '',
            ...(app.draft.login ? { login: app.draft.login } : {}),
        };
        const saved = await apps(this.#server).saveDraft(app.name, {
            account: (account === '' ? 'recipe' : account) as AccountMethod,
            ...fields,
            ...(known.adminUser && !app.draft.adminUser ? { adminUser: known.adminUser } : {}),
            ...(sharedPassword !== undefined ? { sharedPassword } : {}),
        });
        if (recipeForMethod && app.recipeId !== recipeForMethod.id) {
            await apps(this.#server).keepRecipe(app.name, recipeForMethod.id);
        }

        // The run's rollback puts the site back; the draft goes back with it.
        return await this.#startWithFiles(saved, 'sso', actor, async () => {
            await apps(this.#server).saveDraft(app.name, previous);
        });
    }

    async #startWithFiles(app: AppRecord, kind: AppRunKind, actor: DeployUser, undo?: () => Promise<void>): Promise<number> {
        const ready = await this.#withMethodSecrets(app);
        const values = await apps(this.#server).secretsOf(ready.name);
        const { site, ...provider } = await this.#accessFor(ready, kind);
        const { recipe } = await appliedMethod(this.#server, ready);
        const withRecipe = recipe ? composeWithRecipe(ready.draft.compose, recipe) : { text: ready.draft.compose, service: undefined };
        const placeholders = placeholderValues(await methodSettingsOf(this.#server, ready, { adminEmail: true }));
        const compose = fillPlaceholders(withRecipe.text, placeholders);
        const files = { compose: compose.text, secrets: renderSecretsFile(values), site };
        // The gateway is known in the run, once the app's network exists.
        const notes = compose.unfilled
            .filter((name) => name !== 'GATEWAY')
            .map((name) => `The compose file's placeholder {{${name}}} has no value here and is left as it is`);
        const init =
            recipe?.init && ready.initDoneAt === null && withRecipe.service && kind !== 'nginx'
                ? {
                      service: withRecipe.service,
                      commands: recipe.init.map(
                          (command) => fillPlaceholders(command, { ...placeholders, ...openedSecretValues(values) }).text,
                      ),
                      ...(recipe.initUser ? { user: recipe.initUser } : {}),
                  }
                : undefined;
        const previousState = app.state;
        return await this.#start(ready, kind, actor, { files, values, notes, ...(init ? { init } : {}), ...provider }, async (state) => {
            if (state !== 'succeeded' && undo) {
                await undo();
            }

            if (state === 'succeeded' && init) {
                await apps(this.#server).markInitDone(app.name);
            }

            if (kind === 'nginx') {
                return;
            }

            if (state === 'succeeded') {
                await this.#setState(app.name, 'running');
            } else if (state === 'failed' || (state === 'rolled back' && previousState === 'draft')) {
                await this.#setState(app.name, state === 'failed' ? 'failed' : 'draft');
            }
        });
    }

    /** The variables the app's sign-in method keeps in its secrets (an OpenID client's id and secret), made once. */
    async #withMethodSecrets(app: AppRecord): Promise<AppRecord> {
        const applied = (await appliedMethod(this.#server, app)).method;
        const method = applied ? await loadMethod(applied) : undefined;
        if (!method?.secrets) {
            return app;
        }

        const existing = await apps(this.#server).secretsOf(app.name);
        const wanted = method.secrets(existing);
        const missing = Object.entries(wanted).filter(([key, value]) => existing[key] !== value);
        return missing.length === 0 ? app : await apps(this.#server).saveDraft(app.name, { secrets: Object.fromEntries(missing) });
    }

    /**
     * The app with its admin account named when its recipe needs one: the draft's, else the provider's user whose
     * e-mail is the deploying user's; a deploy is refused while there is none.
     */
    async #withAdminUser(app: AppRecord, actor: DeployUser): Promise<AppRecord> {
        const { recipe } = await appliedMethod(this.#server, app);
        if (!recipe || !needsAdminUser(recipe) || app.draft.adminUser) {
            return app;
        }

        const adminUser = await this.#defaultAdminUser(actor);
        if (!adminUser) {
            throw new ValidationError(
                `adminUser: ${recipe.title} needs its admin account named, and no identity-provider user has your e-mail (${actor.email}); ` +
                    'set adminUser (POST /api/apps/{name}/sso or PUT /api/apps/{name}/draft)',
            );
        }

        return await apps(this.#server).saveDraft(app.name, { adminUser });
    }

    /** The identity provider's user whose e-mail is the deploying user's, if the provider is connected and has one. */
    async #defaultAdminUser(actor: DeployUser): Promise<string | undefined> {
        if (!(await idpConnection(this.#server).active())) {
            return undefined;
        }

        const wanted = actor.email.toLowerCase();
        const users = await (await idpConnection(this.#server).client()).users(actor.email).catch(() => []);
        return users.find((user) => user.email?.toLowerCase() === wanted)?.username;
    }

    async #start(
        app: AppRecord,
        kind: AppRunKind,
        actor: DeployUser,
        extra: Partial<AppRunData>,
        onEnd: (state: RunState) => Promise<void>,
    ): Promise<number> {
        const data: Omit<AppRunData, 'runId'> = { app: app.name, kind, domain: app.domain, ...extra };
        return await runs(this.#server).start({ app: app.name, kind, actor, script: RUN_SCRIPT, data: { ...data }, onEnd });
    }

    async #setState(name: string, state: string): Promise<void> {
        await this.#server.app.knex('dp_apps').where({ name }).update({ state });
    }
}

export const lifecycle = defineService<LifecycleService>('lifecycle', (owner) => new LifecycleService(owner));
