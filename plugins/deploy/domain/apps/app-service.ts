import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import { now, toRfc3339 } from '../../../../lib/database.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../../../lib/errors.ts';
import type { Page, Paging } from '../../../../lib/paging.ts';
import { defineService } from '../../../../lib/services.ts';
import { fillYamlPlaceholders } from '../../../../lib/placeholder-fill.ts';
import { parseCompose, renderCompose } from '../compose/compose-model.ts';
import { writeComposeText } from '../compose/compose-yaml.ts';
import { TAG } from '../hub/image-reference.ts';
import { catalog, splitImage } from '../catalog/catalog-service.ts';
import { neededVariables, templateSecretKind } from '../catalog/template-secrets.ts';
import { mainService } from '../recipes/recipe-compose.ts';
import { recipes } from '../recipes/recipe-service.ts';
import type { Recipe } from '../recipes/recipe-types.ts';
import { defaultSite, parseSite, renderSite, sitePlaces } from '../nginx/site-model.ts';
import { appNameProblem } from './app-names.ts';
import { checkDraftFields, checkSecretsSize, type DraftInput, draftFromStored, type StoredDraft, storedDraftText } from './draft-shape.ts';
import { appUrl } from '../access/sign-in-check.ts';
import { Service } from '../../../../lib/service.ts';
import { cell, nullable, rowReader } from '../../../../lib/row-reader.ts';

export interface AppRecord {
    id: number;
    name: string;
    title: string;
    templateId: string | null;
    image: string | null;
    tag: string;
    domain: string;
    state: string;
    hostPort: number;
    draft: StoredDraft;
    /** The recipe the app was made with (its image's, or its catalog template). */
    recipeId: string | null;
    /** When the recipe's one-time `init` commands ran in the app, if they did. */
    initDoneAt: number | null;
    createdAt: number;
    updatedAt: number;
}

export interface NewApp {
    name: string;
    title?: string;
    image?: string;
    templateId?: string;
    tag?: string;
}

/** The filters of the apps list; `q` matches the name, title, domain or image, without regard to case. */
export interface AppFilters {
    q?: string;
    state?: string;
}

/** The columns the apps list reads: nothing sealed, no draft. */
export interface AppListRow {
    name: string;
    title: string;
    state: string;
    image: string | null;
    tag: string;
    domain: string;
    account: string;
    recipeId: string | null;
    access: string | null;
}

const LIST_COLUMNS = ['name', 'title', 'state', 'image', 'tag', 'domain', 'account', 'recipe_id', 'access'];

const toListRow = rowReader<AppListRow>({
    name: ['name', cell.string],
    title: ['title', cell.string],
    state: ['state', cell.string],
    image: ['image', nullable(cell.string)],
    tag: ['tag', cell.string],
    domain: ['domain', cell.string],
    account: ['account', (value) => String(value ?? '')],
    recipeId: ['recipe_id', nullable(cell.string)],
    access: ['access', nullable(cell.string)],
});

/** A LIKE pattern matching `text` anywhere, its wildcards taken literally (escaped with `!`). */
function containsPattern(text: string): string {
    return `%${text.toLowerCase().replace(/[!%_]/g, (character) => `!${character}`)}%`;
}

const SECRET_NAME = /^[A-Z_][A-Z0-9_]{0,127}$/;
const IMAGE_REFERENCE = /^[a-z0-9]+([._/-][a-z0-9]+)*(:[0-9]{1,5}\/[a-z0-9]+([._/-][a-z0-9]+)*)?$/;

const toApp = rowReader<AppRecord>({
    id: ['id', cell.number],
    name: ['name', cell.string],
    title: ['title', cell.string],
    templateId: ['template_id', nullable(cell.string)],
    image: ['image', nullable(cell.string)],
    tag: ['tag', cell.string],
    domain: ['domain', cell.string],
    state: ['state', cell.string],
    hostPort: ['host_port', cell.number],
    draft: ['draft', (value) => draftFromStored(String(value))],
    recipeId: ['recipe_id', nullable(cell.string)],
    initDoneAt: ['init_done_at', nullable(cell.number)],
    createdAt: ['created_at', cell.number],
    updatedAt: ['updated_at', cell.number],
});

let imageCompose: string | undefined;

/** The compose file an app made from an image starts with: one service, published on loopback only. */
function imageComposeTemplate(): string {
    imageCompose ??= writeComposeText({
        services: { app: { image: '{{IMAGE}}', restart: 'unless-stopped', ports: ['127.0.0.1:{{PORT}}:80'] } },
    });
    return imageCompose;
}

/** The template (a recipe's, or the image's own) with the image and port filled in as values, never as text. */
function initialCompose(image: string, tag: string, hostPort: number, template?: Recipe): string {
    const filled = fillYamlPlaceholders(template?.compose ?? imageComposeTemplate(), { IMAGE: `${image}:${tag}`, PORT: String(hostPort) });
    return renderCompose(parseCompose(filled.text));
}

/** Apps as drafts: everything about an app before and around deployment, nothing on the host changed. */
export class AppService extends Service {
    get #settings() {
        return this.server.app.config.apps;
    }

    #aad(name: string, field: string): string {
        return `dp_apps:${name}:${field}`;
    }

    checkName(name: string): void {
        const problem = appNameProblem(name);
        if (problem) {
            throw new ValidationError(problem);
        }
    }

    domainOf(name: string): string {
        return `${name}.${this.#settings.baseDomain}`;
    }

    appDir(name: string): string {
        this.checkName(name);
        return Path.join(this.#settings.appsDir, name);
    }

    sitePath(name: string): string {
        this.checkName(name);
        return Path.join(this.#settings.nginxSitesDir, `${name}.conf`);
    }

    async find(name: string): Promise<AppRecord | undefined> {
        const row = await this.knex('dp_apps').where({ name }).first();
        return row ? toApp(row) : undefined;
    }

    /** Which of `names` are apps here, in one query. */
    async existing(names: readonly string[]): Promise<Set<string>> {
        const rows: Array<{ name: string }> = names.length === 0 ? [] : await this.knex('dp_apps').whereIn('name', names).select('name');
        return new Set(rows.map((row) => row.name));
    }

    async require(name: string): Promise<AppRecord> {
        this.checkName(name);
        const app = await this.find(name);
        if (!app) {
            throw new NotFoundError(`app ${name} not found`);
        }

        return app;
    }

    /** One page of the apps matching the filters, by name, with how many match in all; filtered and counted in SQL. */
    async listPage(filters: AppFilters, paging: Paging): Promise<Page<AppListRow>> {
        const matching = this.knex('dp_apps').modify((query) => {
            if (filters.state) {
                query.where({ state: filters.state });
            }

            const text = filters.q?.trim();
            if (text) {
                const pattern = containsPattern(text);
                query.where((inner) => {
                    for (const column of ['name', 'title', 'domain', 'image']) {
                        inner.orWhereRaw(`lower(??) like ? escape '!'`, [column, pattern]);
                    }
                });
            }
        });
        const [rows, counted] = await Promise.all([
            matching.clone().orderBy('name').limit(paging.limit).offset(paging.offset).select(LIST_COLUMNS),
            matching.clone().count({ count: '*' }).first(),
        ]);
        return { items: rows.map(toListRow), total: Number(counted?.count ?? 0) };
    }

    /** How many apps there are in each state: one grouping query, no app read. */
    async countByState(): Promise<Record<string, number>> {
        const rows: Array<{ state: string; count: number | string }> = await this.knex('dp_apps')
            .groupBy('state')
            .select('state')
            .count({ count: '*' });
        return Object.fromEntries(rows.map((row) => [String(row.state), Number(row.count)]));
    }

    async create(input: NewApp, creatorId: number): Promise<AppRecord> {
        this.checkName(input.name);
        if (!input.image === !input.templateId) {
            throw new ValidationError('image or templateId: give exactly one of them');
        }

        const template = input.templateId ? await recipes(this.server).find(input.templateId) : undefined;
        const imported = input.templateId && !template?.compose ? await catalog(this.server).importedTemplate(input.templateId) : undefined;
        if (input.templateId && !template?.compose && !imported) {
            throw new ValidationError(`templateId: no template ${input.templateId} in the catalog`);
        }

        const importedImage = imported?.image ? splitImage(imported.image) : undefined;
        const image = (template?.image ?? importedImage?.image ?? input.image ?? '').toLowerCase();
        if (!IMAGE_REFERENCE.test(image)) {
            throw new ValidationError('image: not a valid image reference (use the tag field for the tag)');
        }

        const recipe = template ?? (await recipes(this.server).forImage(image))?.recipe;

        const tag = input.tag ?? (template?.compose ? template.tag : undefined) ?? importedImage?.tag ?? 'latest';
        if (!TAG.test(tag)) {
            throw new ValidationError('tag: 1 to 128 letters, digits, _ . or -, not starting with . or -');
        }

        return await this.knex.transaction(async (trx) => {
            if (await trx('dp_apps').where({ name: input.name }).first('id')) {
                throw new ConflictError(`an app named ${input.name} already exists`);
            }

            const highest = await trx('dp_apps').max({ port: 'host_port' }).first();
            const hostPort = Math.max(this.#settings.firstHostPort - 1, Number(highest?.port ?? 0)) + 1;
            const domain = this.domainOf(input.name);
            const draft: StoredDraft = {
                title: input.title ?? template?.title ?? imported?.title ?? input.name,
                compose: initialCompose(image, tag, hostPort, template),
                composeEditor: 'model',
                nginx: renderSite(
                    defaultSite({
                        domain,
                        upstreamPort: hostPort,
                        certificateDir: this.#settings.certificatesDir,
                        httpPort: this.server.app.config.host.nginxHttpPort,
                        httpsPort: this.server.app.config.host.nginxHttpsPort,
                        listenAddress: this.server.app.config.host.nginxListenAddress,
                        acmeChallengeRoot: this.server.app.config.host.acmeWebroot,
                    }),
                ),
                nginxEditor: 'model',
                account: '',
                step: 'image',
            };
            const createdAt = now();
            // A template's own variables (a database password...) get generated values: the draft deploys as made.
            const generated = template?.compose
                ? Object.fromEntries(
                      neededVariables(parseCompose(draft.compose)).map((variable) => [
                          variable,
                          generateSecret(templateSecretKind(variable)),
                      ]),
                  )
                : {};
            const secrets =
                Object.keys(generated).length === 0
                    ? {}
                    : {
                          secrets_sealed: this.server.app.sealer.seal(JSON.stringify(generated), this.#aad(input.name, 'secrets')),
                          secrets_masked: JSON.stringify(maskSecrets(generated)),
                      };
            await trx('dp_apps').insert({
                ...secrets,
                name: input.name,
                title: input.title ?? template?.title ?? imported?.title ?? input.name,
                template_id: input.templateId ?? null,
                recipe_id: recipe?.id ?? null,
                image,
                tag,
                domain,
                host_port: hostPort,
                draft: JSON.stringify(draft),
                created_by: creatorId,
                created_at: createdAt,
                updated_at: createdAt,
            });
            return toApp(await trx('dp_apps').where({ name: input.name }).first());
        });
    }

    /** Saves any subset of the draft; compose and nginx text must parse, secrets are sealed apart from the rest. */
    /**
     * After a run that wrote the compose file succeeded, the app's image and tag are those its main service runs
     * (a compose update may have changed the tag, or the image).
     */
    async followDeployedImage(name: string): Promise<void> {
        const app = await this.require(name);
        if (!app.image) {
            return;
        }

        const spec = parseCompose(app.draft.compose);
        const service = mainService(spec, { image: app.image });
        const reference = service ? spec.services[service]?.image : undefined;
        if (!reference || /\{\{|\$\{/.test(reference)) {
            return;
        }

        const { image, tag } = splitImage(reference);
        if (image !== app.image || tag !== app.tag) {
            await this.knex('dp_apps').where({ name }).update({ image, tag, updated_at: now() });
        }
    }

    async saveDraft(name: string, input: DraftInput): Promise<AppRecord> {
        checkDraftFields(input);
        const app = await this.require(name);
        const { secrets, sharedPassword, ...fields } = input;
        if (fields.compose !== undefined) {
            parseCompose(fields.compose);
        }

        if (fields.nginx !== undefined) {
            parseSite(fields.nginx, sitePlaces(this.server.app.config, { name: app.name, domain: app.domain }));
        }

        const update: Record<string, unknown> = { draft: storedDraftText({ ...app.draft, ...fields }), updated_at: now() };
        if (fields.title !== undefined) {
            update.title = fields.title;
        }

        if (fields.account !== undefined) {
            update.account = fields.account;
        }

        if (secrets !== undefined) {
            for (const key of Object.keys(secrets)) {
                if (!SECRET_NAME.test(key)) {
                    throw new ValidationError(`secrets.${key}: names are upper-case letters, digits and underscores`);
                }
            }

            const merged = { ...(await this.secretsOf(name)), ...secrets };
            checkSecretsSize(merged);
            update.secrets_sealed = this.server.app.sealer.seal(JSON.stringify(merged), this.#aad(name, 'secrets'));
            update.secrets_masked = JSON.stringify(maskSecrets(merged));
        }

        if (sharedPassword !== undefined) {
            update.shared_password_sealed =
                sharedPassword === '' ? null : this.server.app.sealer.seal(sharedPassword, this.#aad(name, 'shared_password'));
        }

        await this.knex('dp_apps').where({ id: app.id }).update(update);
        return await this.require(name);
    }

    async secretsOf(name: string): Promise<Record<string, string>> {
        const row = await this.knex('dp_apps').where({ name }).first('secrets_sealed');
        return row?.secrets_sealed
            ? (JSON.parse(this.server.app.sealer.open(String(row.secrets_sealed), this.#aad(name, 'secrets'))) as Record<string, string>)
            : {};
    }

    /**
     * The secrets as a viewer sees them (names, values masked), without opening them; an app whose secrets were saved
     * before the masked copy was kept has them opened once, to write that copy.
     */
    async maskedSecretsOf(name: string): Promise<Record<string, string>> {
        const row = await this.knex('dp_apps')
            .where({ name })
            .first('secrets_masked', this.knex.raw('secrets_sealed is not null as sealed'));
        if (typeof row?.secrets_masked === 'string') {
            return JSON.parse(row.secrets_masked) as Record<string, string>;
        }

        if (!row?.sealed) {
            return {};
        }

        const masked = maskSecrets(await this.secretsOf(name));
        await this.knex('dp_apps')
            .where({ name })
            .update({ secrets_masked: JSON.stringify(masked) });
        return masked;
    }

    /** The shared account's password, opened: for a run's site only, never for an answer. */
    async sharedPasswordOf(name: string): Promise<string | undefined> {
        const row = await this.knex('dp_apps').where({ name }).first('shared_password_sealed');
        return row?.shared_password_sealed
            ? this.server.app.sealer.open(String(row.shared_password_sealed), this.#aad(name, 'shared_password'))
            : undefined;
    }

    /** Every secret value the app's containers may print: its secrets' values and the shared account's password. */
    async knownSecretValues(name: string): Promise<string[]> {
        const sharedPassword = await this.sharedPasswordOf(name);
        return [...Object.values(await this.secretsOf(name)), ...(sharedPassword ? [sharedPassword] : [])];
    }

    /** The app's auto-login token, made and sealed on first use: for a run's site only, never for an answer. */
    async autologinTokenOf(name: string): Promise<string> {
        const row = await this.knex('dp_apps').where({ name }).first('autologin_token_sealed');
        if (row?.autologin_token_sealed) {
            return this.server.app.sealer.open(String(row.autologin_token_sealed), this.#aad(name, 'autologin_token'));
        }

        const token = Crypto.randomBytes(32).toString('base64url');
        const sealed = this.server.app.sealer.seal(token, this.#aad(name, 'autologin_token'));
        await this.knex('dp_apps').where({ name }).update({ autologin_token_sealed: sealed });
        return token;
    }

    /** Whether `presented` is the app's auto-login token, compared in constant time; false for an app without one. */
    async isAutologinToken(name: string, presented: string): Promise<boolean> {
        const row = await this.knex('dp_apps').where({ name }).first('autologin_token_sealed');
        if (!row?.autologin_token_sealed) {
            return false;
        }

        const token = this.server.app.sealer.open(String(row.autologin_token_sealed), this.#aad(name, 'autologin_token'));
        const [expected, given] = [token, presented].map((value) => Crypto.createHash('sha256').update(value).digest());
        return Crypto.timingSafeEqual(expected as Buffer, given as Buffer);
    }

    /** Pins the recipe the app uses (an app made before its recipe existed takes it when its method is applied). */
    async keepRecipe(name: string, recipeId: string): Promise<void> {
        await this.knex('dp_apps').where({ name }).update({ recipe_id: recipeId });
    }

    async markInitDone(name: string): Promise<void> {
        await this.knex('dp_apps').where({ name }).update({ init_done_at: now() });
    }

    async hasSharedPassword(name: string): Promise<boolean> {
        const row = await this.knex('dp_apps').where({ name }).first('shared_password_sealed');
        return Boolean(row?.shared_password_sealed);
    }

    /** What the API shows of an app: secrets masked unless the caller may see them; the shared password never. */
    async toApi(app: AppRecord, revealSecrets: boolean) {
        const [shownSecrets, hasSharedPassword] = await Promise.all([
            revealSecrets ? this.secretsOf(app.name) : this.maskedSecretsOf(app.name),
            this.hasSharedPassword(app.name),
        ]);
        return {
            name: app.name,
            title: app.title,
            templateId: app.templateId,
            image: app.image,
            tag: app.tag,
            domain: app.domain,
            url: appUrl(this.server.app.config.host, app.domain),
            state: app.state,
            hostPort: app.hostPort,
            createdAt: toRfc3339(app.createdAt),
            updatedAt: toRfc3339(app.updatedAt),
            draft: { ...app.draft, secrets: shownSecrets, hasSharedPassword },
            identity: identityOf(app),
        };
    }
}

/** What is known of how visitors are known inside the app; the single sign-on work fills in options and evidence. */
export function identityOf(app: AppRecord) {
    return { account: app.draft.account ?? '', adminUser: app.draft.adminUser ?? null, options: [], values: {} };
}

export function maskSecret(value: string): string {
    return value === '' ? '' : '••••••••';
}

function maskSecrets(secrets: Record<string, string>): Record<string, string> {
    return Object.fromEntries(Object.entries(secrets).map(([key, value]) => [key, maskSecret(value)]));
}

export function generateSecret(kind: 'password' | 'hex16' | 'hex32'): string {
    if (kind === 'hex16') {
        return Crypto.randomBytes(16).toString('hex');
    }

    if (kind === 'hex32') {
        return Crypto.randomBytes(32).toString('hex');
    }

    // 24 characters from a 64-symbol alphabet: 144 bits, no characters that need quoting in an env file.
    return Crypto.randomBytes(18).toString('base64url');
}

export function readIfExists(file: string): string | undefined {
    return Fs.existsSync(file) ? Fs.readFileSync(file, 'utf8') : undefined;
}

export const apps = defineService<AppService>('apps', (owner) => new AppService(owner));
