/**
 * Starting the runs that change the host. Everything a person can fix is checked here, before a run starts
 * and before anything is saved (422); the run itself executes jobs/app-run.ts in a worker.
 */

import { ConflictError, forField, ValidationError } from '../../../../lib/errors.ts';
import { defineService } from '../../../../lib/services.ts';
import { jobFile } from '../../../jobs.ts';
import type { DeployUser } from '../accounts/user-service.ts';
import { renderSecretsFile } from '../apps/app-files.ts';
import { type AppRecord, apps } from '../apps/app-service.ts';
import { startedAdapterNames } from '../apps/spec-definitions.ts';
import { backupFirstMaker } from './backup-first.ts';
import { hasUnacceptedRisks, lintCompose, lintContextFor, parseCompose, renderCompose, validateCompose } from '../compose/compose-model.ts';
import { modelFromJson } from '../compose/compose-read.ts';
import { withServiceImage } from '../compose/compose-yaml.ts';
import type { ComposeSpec } from '../compose/compose-types.ts';
import { idpConnection } from '../../../idp/connection-service.ts';
import { loadMethod, methodNames } from '../../../sso/methods.ts';
import type { MethodNeed } from '../../../sso/method-types.ts';
import { fillCommandPlaceholders, fillYamlPlaceholders, openedSecretValues, placeholderValues } from '../../../sso/placeholders.ts';
import { appAccess } from '../access/access-service.ts';
import { appliedMethod, methodSettingsOf } from '../access/identity.ts';
import { accessForRun } from '../access/run-site.ts';
import { composeWithRecipe, mainService } from '../recipes/recipe-compose.ts';
import { refuseBadRecipe } from '../recipes/recipe-files.ts';
import { recipes } from '../recipes/recipe-service.ts';
import { needsAdminUser, recipeNeeds } from '../recipes/recipe-types.ts';
import { type AccountMethod, checkSamlAcs, type DraftInput, isAccountName, type StoredDraft } from '../apps/draft-shape.ts';
import type { AppAction, AppRunData, AppRunKind, BackupFirst, DeleteOptions, InitCommands } from '../engine/run-context.ts';
import { DRAFT_IN_JOURNAL, writeJournal } from '../engine/run-journal.ts';
import type { Finding } from '../findings/finding.ts';
import { checkSite, parseSite, renderSite, type SiteSpec, sitePlaces } from '../nginx/site-model.ts';
import { type RunState, runs } from '../runs/run-service.ts';
import { Service } from '../../../../lib/service.ts';

/** The run worker, in the project's jobs/ (this file is plugins/deploy/domain/lifecycle/). */
const RUN_SCRIPT = jobFile('app-run');

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

/** The app as it would be with the draft changed (nothing saved). */
function withDraft(app: AppRecord, change: Partial<StoredDraft>): AppRecord {
    return { ...app, draft: { ...app.draft, ...change } };
}

/** The recipe's one-time commands with their placeholders as variables, and the values of those variables. */
function initCommands(commands: string[], values: Record<string, string>): Pick<InitCommands, 'commands' | 'environment'> {
    const filled = commands.map((command) => fillCommandPlaceholders(command, values));
    return { commands: filled.map((one) => one.command), environment: Object.assign({}, ...filled.map((one) => one.environment)) };
}

function describe(findings: Finding[]): string {
    // The schema's findings say their path themselves.
    return findings
        .map((finding) => (finding.message.startsWith(`${finding.path}: `) ? finding.message : `${finding.path}: ${finding.message}`))
        .join('; ');
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

/** What a sign-in method may need, in the words the pages show (the field names stay first, for API clients). */
const NEED_WORDS: Record<MethodNeed, string> = {
    adminUser: "the app's admin account",
    samlAcs: "the app's SAML ACS path",
    sharedUser: 'the shared account',
    sharedPassword: "the shared account's password",
};

/** Why a backup before a change was made, per kind of run that changes a deployed app (an action changes nothing). */
const BACKUP_REASONS: Partial<Record<AppRunKind, string>> = {
    deploy: 'before deploy',
    compose: 'before compose change',
    nginx: 'before nginx change',
    sso: 'before sign-in change',
    delete: 'before delete',
    update: 'before update',
};

export class LifecycleService extends Service {
    async deploy(name: string, actor: DeployUser, acceptRisks = false): Promise<number> {
        const app = await apps(this.server).require(name);
        await this.#refuseWhileRunning(app.name);
        await this.#refuseBadAppliedRecipe(app);
        const secrets = await apps(this.server).secretsOf(app.name);
        await this.#checkCompose(app.name, app.draft.compose, secrets, acceptRisks);
        await appAccess(this.server).refuseAccidentalAccess(app);
        const adminUser = await this.#missingAdminUser(app, actor);
        await this.#checkFilledCompose(withDraft(app, adminUser ? { adminUser } : {}), secrets, acceptRisks);
        const ready = adminUser ? await apps(this.server).saveDraft(app.name, { adminUser }) : app;
        return await this.#startWithFiles(ready, 'deploy', actor);
    }

    async updateCompose(name: string, actor: DeployUser, update: ComposeUpdate): Promise<number> {
        const app = await apps(this.server).require(name);
        const chosen = pick(update.mode, update.spec, update.text);
        const text = chosen.text ?? renderCompose(forField('spec', () => modelFromJson(chosen.spec)));
        const secrets = { ...(await apps(this.server).secretsOf(app.name)), ...(update.secrets ?? {}) };
        await this.#refuseWhileRunning(app.name);
        await this.#refuseBadAppliedRecipe(app);
        await this.#checkCompose(app.name, text, secrets, update.acceptRisks === true);
        await this.#checkFilledCompose(withDraft(app, { compose: text }), secrets, update.acceptRisks === true);
        const saved = await apps(this.server).saveDraft(app.name, {
            compose: text,
            composeEditor: update.mode,
            ...(update.secrets ? { secrets: update.secrets } : {}),
        });
        // A failed update puts the compose file back, and the draft with it (the secrets given stay saved).
        return await this.#startWithFiles(saved, 'compose', actor, { compose: app.draft.compose, composeEditor: app.draft.composeEditor });
    }

    async updateSite(name: string, actor: DeployUser, update: SiteUpdate): Promise<number> {
        const app = await apps(this.server).require(name);
        const chosen = pick(update.mode, update.spec, update.text);
        const text = chosen.text ?? forField('spec', () => renderSite(chosen.spec as SiteSpec));
        const places = sitePlaces(this.server.app.config, { name: app.name, domain: app.domain });
        const errors = checkSite(forField(update.mode === 'model' ? 'spec' : 'text', () => parseSite(text, places)).spec, places).filter(
            (finding) => finding.level === 'error',
        );
        if (update.mode === 'model' && errors.length > 0) {
            throw new ValidationError(describe(errors));
        }

        await this.#refuseWhileRunning(app.name);
        await this.#refuseBadAppliedRecipe(app);
        const saved = await apps(this.server).saveDraft(app.name, { nginx: text, nginxEditor: update.mode });
        // A refused site puts the site file back, and the draft with it: else every later deploy writes the refused site.
        return await this.#startWithFiles(saved, 'nginx', actor, { nginx: app.draft.nginx, nginxEditor: app.draft.nginxEditor });
    }

    /**
     * Moves the app's main service to another tag of its image (or pulls its moving tag again) in a run that backs the
     * app up first whatever BACKUP_BEFORE_CHANGES says, and on any failure puts back the image and the data.
     */
    /** `actor` null: an automatic update (the daily check's, for an app that asked for them). */
    async updateImage(name: string, actor: DeployUser | null, tag: string): Promise<number> {
        const app = await apps(this.server).require(name);
        if (app.state === 'draft' || !app.image) {
            throw new ValidationError(
                `${app.name} ${app.image ? 'has not been deployed yet: deploy it first' : 'runs no image of its own: update its compose file'}`,
            );
        }

        await this.#refuseWhileRunning(app.name);
        await this.#refuseBadAppliedRecipe(app);
        const spec = parseCompose(app.draft.compose);
        const service = mainService(spec, { image: app.image });
        if (!service || spec.services[service]?.image !== `${app.image}:${app.tag}`) {
            throw new ValidationError(
                `tag: the compose file's main service does not run ${app.image}:${app.tag}; change its compose file instead`,
            );
        }

        const compose = withServiceImage(app.draft.compose, service, `${app.image}:${tag}`);
        // The tag is the only change: risks the compose file had were accepted when it was deployed.
        await this.#checkFilledCompose(withDraft(app, { compose }), await apps(this.server).secretsOf(app.name), true);
        const saved = await apps(this.server).saveDraft(app.name, { compose });
        return await this.#startWithFiles(saved, 'update', actor, { compose: app.draft.compose, composeEditor: app.draft.composeEditor });
    }

    async act(name: string, actor: DeployUser, action: AppAction): Promise<number> {
        const app = await apps(this.server).require(name);
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
        const app = await apps(this.server).require(name);
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
        const access = options.removeAccess ? await appAccess(this.server).forRun(app) : undefined;
        // The run ends long after start() answers its id, so the id is set when onEnd reads it.
        const runId = await this.#start(app, 'delete', actor, { remove: options, ...(access ? { access } : {}) }, async (state) => {
            if (state === 'succeeded') {
                await this.#forgetApp(app.name, options.forgetHistory ? runId : undefined);
            } else if (state !== 'rolled back') {
                // Part of the app is gone (its run says which): it is no longer running, and deleting it again finishes.
                await this.#setState(app.name, 'failed');
            }
        });
        return runId;
    }

    async #forgetApp(name: string, keepRun: number | undefined): Promise<void> {
        const knex = this.server.app.knex;
        await knex('dp_app_resources').where({ app_name: name }).delete();
        await knex('dp_apps').where({ name }).delete();
        if (keepRun !== undefined) {
            await runs(this.server).forget(name, keepRun);
        }
    }

    async #checkCompose(app: string, text: string, secrets: Record<string, string>, acceptRisks: boolean): Promise<void> {
        const spec = forField('compose', () => parseCompose(text));
        const errors = await validateCompose(spec, { secrets, checkHostPorts: false });
        if (errors.length > 0) {
            throw new ValidationError(`the compose file cannot be deployed: ${describe(errors)}`);
        }

        this.#refuseRisks(spec, app, secrets, acceptRisks, 'the compose file');
    }

    #refuseRisks(spec: ComposeSpec, app: string, secrets: Record<string, string>, acceptRisks: boolean, what: string): void {
        const findings = lintCompose(spec, lintContextFor(this.server.app.config, { app, values: secrets }));
        if (!acceptRisks && hasUnacceptedRisks(findings)) {
            const risks = findings.filter((finding) => finding.level === 'risk');
            throw new ValidationError(`acceptRisks: lint found risks in ${what}; accept them to deploy anyway: ${describe(risks)}`);
        }
    }

    async #refuseWhileRunning(app: string): Promise<void> {
        if (await runs(this.server).inProgress(app)) {
            throw new ConflictError(`another run is in progress for ${app}`);
        }
    }

    /** Sets the app's sign-in method and applies it in a run that rewrites, restarts and checks, rolled back on failure. */
    async changeSignIn(name: string, actor: DeployUser, change: SignInChange): Promise<number> {
        const app = await apps(this.server).require(name);
        await this.#refuseWhileRunning(app.name);
        const account = change.account ?? '';
        const recipe = await recipes(this.server).forApp(app);
        const methodName = account === '' || account === 'recipe' ? recipe?.method : account;
        if (!methodName) {
            throw new ValidationError(`account: no recipe applies to ${app.image ?? app.name}; choose a method`);
        }

        const method = await loadMethod(methodName);
        if (!method) {
            throw new ValidationError(`account: the ${methodName} method is not available; available: ${methodNames().join(', ')}`);
        }

        const recipeForMethod = recipe?.method === methodName ? recipe : undefined;
        if (recipeForMethod) {
            refuseBadRecipe(recipeForMethod);
        }

        if (method.needsRecipe && !recipeForMethod) {
            throw new ValidationError(
                `account: ${methodName} needs a recipe that says how ${app.image ?? app.name} turns its own login off, and no recipe for it does`,
            );
        }

        if (change.login && !startedAdapterNames().includes(change.login.adapter)) {
            throw new ValidationError(
                `login.adapter: there is no auto-login adapter ${change.login.adapter}; available: ${startedAdapterNames().join(', ')}`,
            );
        }

        checkSamlAcs(change.samlAcs);
        if (!(await idpConnection(this.server).active())) {
            throw new ValidationError(
                'connect an identity provider first (Admin, Identity provider): every method works behind its forward auth',
            );
        }

        const { account: _account, sharedPassword, acceptRisks, ...fields } = change;
        const needsAdmin = recipeForMethod !== undefined && needsAdminUser(recipeForMethod);
        const known = {
            adminUser: fields.adminUser ?? app.draft.adminUser ?? (needsAdmin ? await this.#defaultAdminUser(actor) : undefined),
            samlAcs: fields.samlAcs ?? app.draft.samlAcs,
            sharedUser: fields.sharedUser ?? app.draft.sharedUser,
            sharedPassword: sharedPassword ?? (await apps(this.server).sharedPasswordOf(app.name)),
        };
        const needs = [...new Set([...method.needs, ...(recipeForMethod ? recipeNeeds(recipeForMethod) : [])])];
        const missing = needs.filter((need) => !known[need]);
        if (missing.length > 0) {
            const named = missing.map((need) => NEED_WORDS[need]).join(' and ');
            throw new ValidationError(`${missing.join(', ')}: ${method.title} needs ${named}`);
        }

        if (needs.includes('samlAcs')) {
            checkSamlAcs(known.samlAcs);
        }

        const draftChange: Partial<StoredDraft> = {
            account: (account === '' ? 'recipe' : account) as AccountMethod,
            ...fields,
            ...(known.adminUser && !app.draft.adminUser ? { adminUser: known.adminUser } : {}),
        };
        const secrets = await apps(this.server).secretsOf(app.name);
        await this.#checkCompose(app.name, app.draft.compose, secrets, acceptRisks === true);
        const changed = { ...withDraft(app, draftChange), recipeId: recipeForMethod?.id ?? app.recipeId };
        await this.#checkFilledCompose(changed, secrets, acceptRisks === true);
        const previousPassword = await apps(this.server).sharedPasswordOf(app.name);
        const previous = {
            account: app.draft.account ?? '',
            adminUser: app.draft.adminUser ?? '',
            samlAcs: app.draft.samlAcs ?? '',
            samlAudience: app.draft.samlAudience ?? '',
            sharedUser: app.draft.sharedUser ?? '',
            sharedPassword: previousPassword ?? '',
            ...(app.draft.login ? { login: app.draft.login } : {}),
        };
        const saved = await apps(this.server).saveDraft(app.name, {
            ...draftChange,
            ...(sharedPassword !== undefined ? { sharedPassword } : {}),
        });
        if (recipeForMethod && app.recipeId !== recipeForMethod.id) {
            await apps(this.server).keepRecipe(app.name, recipeForMethod.id);
        }

        // The run's rollback puts the site back; the draft goes back with it.
        return await this.#startWithFiles(saved, 'sso', actor, previous);
    }

    /** A run that applies the app's recipe is refused before anything is written when the recipe fails the checks. */
    async #refuseBadAppliedRecipe(app: AppRecord): Promise<void> {
        const { recipe } = await appliedMethod(this.server, app);
        if (recipe) {
            refuseBadRecipe(recipe);
        }
    }

    /** `previousDraft`: the draft fields the run changes, put back when it fails (or is undone after a crash). */
    async #startWithFiles(app: AppRecord, kind: AppRunKind, actor: DeployUser | null, previousDraft?: DraftInput): Promise<number> {
        const ready = await this.#withMethodSecrets(app);
        const values = await apps(this.server).secretsOf(ready.name);
        const { site, ...provider } = await accessForRun(this.server, ready, kind);
        const { recipe, service, placeholders, compose } = await this.#composeToWrite(ready);
        const files = { compose: compose.text, secrets: renderSecretsFile(values), site };
        // The gateway is known in the run, once the app's network exists.
        const notes = compose.unfilled
            .filter((name) => name !== 'GATEWAY')
            .map((name) => `The compose file's placeholder {{${name}}} has no value here and is left as it is`);
        const init =
            recipe?.init && ready.initDoneAt === null && service && kind !== 'nginx'
                ? {
                      service,
                      ...initCommands(recipe.init, { ...placeholders, ...openedSecretValues(values) }),
                      ...(recipe.initUser ? { user: recipe.initUser } : {}),
                  }
                : undefined;
        const previousState = app.state;
        const journalDraft = previousDraft ? (runId: number) => this.#journalDraft(runId, previousDraft) : undefined;
        const extra = { files, values, notes, ...(init ? { init } : {}), ...provider };
        return await this.#start(
            ready,
            kind,
            actor,
            extra,
            async (state) => {
                if (state !== 'succeeded' && previousDraft) {
                    await apps(this.server).saveDraft(app.name, previousDraft);
                }

                if (state === 'succeeded' && init) {
                    await apps(this.server).markInitDone(app.name);
                }

                if (kind === 'nginx') {
                    return;
                }

                if (state === 'succeeded') {
                    await this.#setState(app.name, 'running');
                    await apps(this.server).followDeployedImage(app.name);
                } else if (state === 'failed' || (state === 'rolled back' && previousState === 'draft')) {
                    await this.#setState(app.name, state === 'failed' ? 'failed' : 'draft');
                }
            },
            journalDraft,
        );
    }

    /** The draft as it was, in the run's journal, for a server that takes the run over after a crash to put back. */
    async #journalDraft(runId: number, previous: DraftInput): Promise<void> {
        const sealed = this.server.app.sealer.seal(JSON.stringify(previous), DRAFT_IN_JOURNAL);
        await writeJournal(this.server.app.knex, runId, { type: 'draft', sealed });
    }

    /** The compose file a run of the app writes: the recipe's changes made, the placeholders filled in its values. */
    async #composeToWrite(app: AppRecord) {
        const { recipe } = await appliedMethod(this.server, app);
        const withRecipe = recipe ? composeWithRecipe(app.draft.compose, recipe) : { text: app.draft.compose, service: undefined };
        const placeholders = placeholderValues(await methodSettingsOf(this.server, app, { adminEmail: true }));
        const compose = forField('compose', () => fillYamlPlaceholders(withRecipe.text, placeholders));
        return { recipe, service: withRecipe.service, placeholders, compose };
    }

    /** Lints the compose file exactly as the run would write it: a value a placeholder brings in may be a risk of its own. */
    async #checkFilledCompose(app: AppRecord, secrets: Record<string, string>, acceptRisks: boolean): Promise<void> {
        const { compose } = await this.#composeToWrite(app);
        const spec = forField('compose', () => parseCompose(compose.text));
        this.#refuseRisks(spec, app.name, secrets, acceptRisks, 'the compose file as it will be written (placeholders filled)');
    }

    /** The variables the app's sign-in method keeps in its secrets (an OpenID client's id and secret), made once. */
    async #withMethodSecrets(app: AppRecord): Promise<AppRecord> {
        const applied = (await appliedMethod(this.server, app)).method;
        const method = applied ? await loadMethod(applied) : undefined;
        if (!method?.secrets) {
            return app;
        }

        const existing = await apps(this.server).secretsOf(app.name);
        const wanted = method.secrets(existing);
        const missing = Object.entries(wanted).filter(([key, value]) => existing[key] !== value);
        return missing.length === 0 ? app : await apps(this.server).saveDraft(app.name, { secrets: Object.fromEntries(missing) });
    }

    /**
     * The admin account to name when the app's recipe needs one and the draft names none: the provider's user whose
     * e-mail is the deploying user's; a deploy is refused while there is none.
     */
    async #missingAdminUser(app: AppRecord, actor: DeployUser): Promise<string | undefined> {
        const { recipe } = await appliedMethod(this.server, app);
        if (!recipe || !needsAdminUser(recipe) || app.draft.adminUser) {
            return undefined;
        }

        const adminUser = await this.#defaultAdminUser(actor);
        if (!adminUser) {
            throw new ValidationError(
                `adminUser: ${recipe.title} needs its admin account named, and no identity-provider user has your e-mail (${actor.email}); ` +
                    "name the app's admin account on the app's Sign-in tab (or in the new app's Access and admin account step)",
            );
        }

        return adminUser;
    }

    /** The identity provider's user whose e-mail is the deploying user's, if the provider is connected and has one. */
    async #defaultAdminUser(actor: DeployUser): Promise<string | undefined> {
        if (!(await idpConnection(this.server).active())) {
            return undefined;
        }

        const wanted = actor.email.toLowerCase();
        const users = await (await idpConnection(this.server).client()).users(actor.email).catch(() => []);
        const username = users.find((user) => user.email?.toLowerCase() === wanted)?.username;
        // A provider's user name goes into the app's files as its admin: only one the API would take.
        return username !== undefined && isAccountName(username) ? username : undefined;
    }

    async #start(
        app: AppRecord,
        kind: AppRunKind,
        actor: DeployUser | null,
        extra: Partial<AppRunData>,
        onEnd: (state: RunState) => Promise<void>,
        beforeExecute?: (runId: number) => Promise<void>,
    ): Promise<number> {
        const backupFirst = await this.#backupFirst(app, kind, extra.remove);
        const data: Omit<AppRunData, 'runId'> = {
            app: app.name,
            kind,
            domain: app.domain,
            ...extra,
            ...(backupFirst ? { backupFirst } : {}),
        };
        const request = { app: app.name, kind, actor, script: RUN_SCRIPT, data: { ...data }, onEnd };
        return await runs(this.server).start(beforeExecute ? { ...request, beforeExecute } : request);
    }

    /** A deployed app's backup before a run that changes it; a delete takes one only when it removes data it would archive. */
    async #backupFirst(app: AppRecord, kind: AppRunKind, remove: DeleteOptions | undefined): Promise<BackupFirst | undefined> {
        const reason = BACKUP_REASONS[kind];
        const removesData = remove !== undefined && (remove.deleteData || remove.removeVolumes) && !remove.removeArchives;
        const wanted = kind === 'update' || this.server.app.config.backups.beforeChanges;
        if (!reason || (kind === 'delete' && !removesData) || app.state === 'draft' || !wanted) {
            return undefined;
        }

        return await backupFirstMaker(this.server)?.(app, reason);
    }

    async #setState(name: string, state: string): Promise<void> {
        await this.server.app.knex('dp_apps').where({ name }).update({ state });
    }
}

export const lifecycle = defineService<LifecycleService>('lifecycle', (owner) => new LifecycleService(owner));
