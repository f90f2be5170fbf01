import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import type { Server } from '@hapi/hapi';
import type { Knex } from 'knex';

import { now, toRfc3339 } from '../../../../lib/database.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../../../lib/errors.ts';
import { defineService } from '../../../../lib/services.ts';
import { parseCompose, renderCompose } from '../compose/compose-model.ts';
import { catalog, splitImage } from '../catalog/catalog-service.ts';
import { recipes } from '../recipes/recipe-service.ts';
import type { Recipe } from '../recipes/recipe-types.ts';
import { defaultSite, parseSite, renderSite, sitePlaces } from '../nginx/site-model.ts';
import { appNameProblem } from './app-names.ts';
import { checkDraftFields, checkSecretsSize, type DraftInput, draftFromStored, type StoredDraft, storedDraftText } from './draft-shape.ts';

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

const SECRET_NAME = /^[A-Z_][A-Z0-9_]{0,127}$/;
const IMAGE_REFERENCE = /^[a-z0-9]+([._/-][a-z0-9]+)*(:[0-9]{1,5}\/[a-z0-9]+([._/-][a-z0-9]+)*)?$/;

function toApp(row: Record<string, unknown>): AppRecord {
    return {
        id: Number(row.id),
        name: String(row.name),
        title: String(row.title),
        templateId: row.template_id === null ? null : String(row.template_id),
        image: row.image === null ? null : String(row.image),
        tag: String(row.tag),
        domain: String(row.domain),
        state: String(row.state),
        hostPort: Number(row.host_port),
        draft: draftFromStored(String(row.draft)),
        recipeId: row.recipe_id === null || row.recipe_id === undefined ? null : String(row.recipe_id),
        initDoneAt: row.init_done_at === null || row.init_done_at === undefined ? null : Number(row.init_done_at),
        createdAt: Number(row.created_at),
        updatedAt: Number(row.updated_at),
    };
}

/** The compose file an app made from an image starts with: one service, published on loopback only. */
function initialCompose(image: string, tag: string, hostPort: number, template?: Recipe): string {
    if (template?.compose) {
        const filled = template.compose.replaceAll('{{IMAGE}}', `${image}:${tag}`).replaceAll('{{PORT}}', String(hostPort));
        return renderCompose(parseCompose(filled));
    }

    return renderCompose(
        parseCompose(
            [
                'services:',
                '  app:',
                `    image: ${image}:${tag}`,
                '    restart: unless-stopped',
                '    ports:',
                `      - "127.0.0.1:${hostPort}:80"`,
                '',
            ].join('\n'),
        ),
    );
}

/** Apps as drafts: everything about an app before and around deployment, nothing on the host changed. */
export class AppService {
    readonly #server: Server;

    constructor(server: Server) {
        this.#server = server;
    }

    get #knex(): Knex {
        return this.#server.app.knex;
    }

    get #settings() {
        return this.#server.app.config.apps;
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
        const row = await this.#knex('dp_apps').where({ name }).first();
        return row ? toApp(row) : undefined;
    }

    async require(name: string): Promise<AppRecord> {
        this.checkName(name);
        const app = await this.find(name);
        if (!app) {
            throw new NotFoundError(`app ${name} not found`);
        }

        return app;
    }

    async list(): Promise<AppRecord[]> {
        return (await this.#knex('dp_apps').orderBy('name')).map(toApp);
    }

    async create(input: NewApp, creatorId: number): Promise<AppRecord> {
        this.checkName(input.name);
        if (!input.image === !input.templateId) {
            throw new ValidationError('image or templateId: give exactly one of them');
        }

        const template = input.templateId ? await recipes(this.#server).find(input.templateId) : undefined;
        const imported =
            input.templateId && !template?.compose ? await catalog(this.#server).importedTemplate(input.templateId) : undefined;
        if (input.templateId && !template?.compose && !imported) {
            throw new ValidationError(`templateId: no template ${input.templateId} in the catalog`);
        }

        const importedImage = imported?.image ? splitImage(imported.image) : undefined;
        const image = (template?.image ?? importedImage?.image ?? input.image ?? '').toLowerCase();
        if (!IMAGE_REFERENCE.test(image)) {
            throw new ValidationError('image: not a valid image reference (use the tag field for the tag)');
        }

        const recipe = template ?? (await recipes(this.#server).forImage(image))?.recipe;

        const tag = input.tag ?? importedImage?.tag ?? 'latest';
        return await this.#knex.transaction(async (trx) => {
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
                        httpPort: this.#server.app.config.host.nginxHttpPort,
                        httpsPort: this.#server.app.config.host.nginxHttpsPort,
                        listenAddress: this.#server.app.config.host.nginxListenAddress,
                        acmeChallengeRoot: this.#server.app.config.host.acmeWebroot,
                    }),
                ),
                nginxEditor: 'model',
                account: '',
                step: 'image',
            };
            const createdAt = now();
            await trx('dp_apps').insert({
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
    async saveDraft(name: string, input: DraftInput): Promise<AppRecord> {
        checkDraftFields(input);
        const app = await this.require(name);
        const { secrets, sharedPassword, ...fields } = input;
        if (fields.compose !== undefined) {
            parseCompose(fields.compose);
        }

        if (fields.nginx !== undefined) {
            parseSite(fields.nginx, sitePlaces(this.#server.app.config, { name: app.name, domain: app.domain }));
        }

        const update: Record<string, unknown> = { draft: storedDraftText({ ...app.draft, ...fields }), updated_at: now() };
        if (fields.title !== undefined) {
            update.title = fields.title;
        }

        if (secrets !== undefined) {
            for (const key of Object.keys(secrets)) {
                if (!SECRET_NAME.test(key)) {
                    throw new ValidationError(`secrets.${key}: names are upper-case letters, digits and underscores`);
                }
            }

            const merged = { ...(await this.secretsOf(name)), ...secrets };
            checkSecretsSize(merged);
            update.secrets_sealed = this.#server.app.sealer.seal(JSON.stringify(merged), this.#aad(name, 'secrets'));
        }

        if (sharedPassword !== undefined) {
            update.shared_password_sealed =
                sharedPassword === '' ? null : this.#server.app.sealer.seal(sharedPassword, this.#aad(name, 'shared_password'));
        }

        await this.#knex('dp_apps').where({ id: app.id }).update(update);
        return await this.require(name);
    }

    async secretsOf(name: string): Promise<Record<string, string>> {
        const row = await this.#knex('dp_apps').where({ name }).first('secrets_sealed');
        return row?.secrets_sealed
            ? (JSON.parse(this.#server.app.sealer.open(String(row.secrets_sealed), this.#aad(name, 'secrets'))) as Record<string, string>)
            : {};
    }

    /** The shared account's password, opened: for a run's site only, never for an answer. */
    async sharedPasswordOf(name: string): Promise<string | undefined> {
        const row = await this.#knex('dp_apps').where({ name }).first('shared_password_sealed');
        return row?.shared_password_sealed
            ? this.#server.app.sealer.open(String(row.shared_password_sealed), this.#aad(name, 'shared_password'))
            : undefined;
    }

    /** The app's auto-login token, made and sealed on first use: for a run's site only, never for an answer. */
    async autologinTokenOf(name: string): Promise<string> {
        const row = await this.#knex('dp_apps').where({ name }).first('autologin_token_sealed');
        if (row?.autologin_token_sealed) {
            return this.#server.app.sealer.open(String(row.autologin_token_sealed), this.#aad(name, 'autologin_token'));
        }

        const token = Crypto.randomBytes(32).toString('base64url');
        const sealed = this.#server.app.sealer.seal(token, this.#aad(name, 'autologin_token'));
        await this.#knex('dp_apps').where({ name }).update({ autologin_token_sealed: sealed });
        return token;
    }

    /** Whether `presented` is the app's auto-login token, compared in constant time; false for an app without one. */
    async isAutologinToken(name: string, presented: string): Promise<boolean> {
        const row = await this.#knex('dp_apps').where({ name }).first('autologin_token_sealed');
        if (!row?.autologin_token_sealed) {
            return false;
        }

        const token = this.#server.app.sealer.open(String(row.autologin_token_sealed), this.#aad(name, 'autologin_token'));
        const [expected, given] = [token, presented].map((value) => Crypto.createHash('sha256').update(value).digest());
        return Crypto.timingSafeEqual(expected as Buffer, given as Buffer);
    }

    /** Pins the recipe the app uses (an app made before its recipe existed takes it when its method is applied). */
    async keepRecipe(name: string, recipeId: string): Promise<void> {
        await this.#knex('dp_apps').where({ name }).update({ recipe_id: recipeId });
    }

    async markInitDone(name: string): Promise<void> {
        await this.#knex('dp_apps').where({ name }).update({ init_done_at: now() });
    }

    async hasSharedPassword(name: string): Promise<boolean> {
        const row = await this.#knex('dp_apps').where({ name }).first('shared_password_sealed');
        return Boolean(row?.shared_password_sealed);
    }

    /** What the API shows of an app: secrets masked unless the caller may see them; the shared password never. */
    async toApi(app: AppRecord, revealSecrets: boolean) {
        const secrets = await this.secretsOf(app.name);
        const shownSecrets = Object.fromEntries(
            Object.entries(secrets).map(([key, value]) => [key, revealSecrets ? value : maskSecret(value)]),
        );
        return {
            name: app.name,
            title: app.title,
            templateId: app.templateId,
            image: app.image,
            tag: app.tag,
            domain: app.domain,
            url: `https://${app.domain}/`,
            state: app.state,
            hostPort: app.hostPort,
            createdAt: toRfc3339(app.createdAt),
            updatedAt: toRfc3339(app.updatedAt),
            draft: { ...app.draft, secrets: shownSecrets, hasSharedPassword: await this.hasSharedPassword(app.name) },
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
