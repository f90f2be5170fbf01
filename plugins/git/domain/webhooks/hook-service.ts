import Crypto from 'node:crypto';

import type { Knex } from 'knex';

import { now, toRfc3339 } from '../../../../lib/database.ts';
import { NotFoundError, ValidationError } from '../../../../lib/errors.ts';
import type { Paging } from '../../../../lib/paging.ts';
import { defineService } from '../../../../lib/services.ts';
import { expandEvents, type HookEvent } from './events.ts';
import { deliveryScheduler } from './scheduler.ts';
import { Service } from '../../../../lib/service.ts';

export const CONTENT_TYPES = ['json', 'form'] as const;
/** Hook types whose payload is Gitea's own; others (Slack, Discord...) are stored but not delivered yet. */
export const DELIVERED_TYPES = ['gitea', 'gogs'];
/** Sealed secrets are bound to their purpose, so one cannot be swapped for the other. */
export const SECRET_PURPOSE = 'webhook-secret';
export const AUTHORIZATION_PURPOSE = 'webhook-authorization';

export type HookKind = 'system' | 'default' | 'all';

export interface HookRow {
    id: number;
    repo_id: number | null;
    is_system_webhook: boolean;
    type: string;
    name: string;
    url: string;
    content_type: string;
    http_method: string;
    secret_sealed: string | null;
    authorization_header_sealed: string | null;
    events: HookEvent[];
    branch_filter: string;
    is_active: boolean;
    created_at: number;
    updated_at: number;
}

export interface CreateHookInput {
    type: string;
    name?: string;
    config: Record<string, string>;
    events?: string[];
    branch_filter?: string;
    authorization_header?: string;
    active?: boolean;
}

export type EditHookInput = Partial<Omit<CreateHookInput, 'type'>>;

export interface ApiHook {
    id: number;
    type: string;
    name: string;
    branch_filter: string;
    config: Record<string, string>;
    events: string[];
    authorization_header: string;
    active: boolean;
    created_at: string;
    updated_at: string;
}

export function toHookRow(raw: Record<string, unknown>): HookRow {
    return {
        ...(raw as unknown as HookRow),
        id: Number(raw.id),
        repo_id: raw.repo_id === null || raw.repo_id === undefined ? null : Number(raw.repo_id),
        is_system_webhook: Boolean(raw.is_system_webhook),
        is_active: Boolean(raw.is_active),
        events: JSON.parse(String(raw.events)) as HookEvent[],
        created_at: Number(raw.created_at),
        updated_at: Number(raw.updated_at),
    };
}

/** Gitea's Hook; the secret and the authorization header never leave the server. */
export function toApiHook(hook: HookRow): ApiHook {
    return {
        id: hook.id,
        type: hook.type,
        name: hook.name,
        branch_filter: hook.branch_filter,
        config: { url: hook.url, content_type: hook.content_type },
        events: hook.events,
        authorization_header: '',
        active: hook.is_active,
        created_at: toRfc3339(hook.created_at),
        updated_at: toRfc3339(hook.updated_at),
    };
}

/** Go's strconv.ParseBool. */
function parseGoBool(value: string): boolean | undefined {
    if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) {
        return true;
    }

    return ['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value) ? false : undefined;
}

function checkUrl(url: string): void {
    let parsed: URL;
    try {
        parsed = new URL(url);
    } catch {
        throw new ValidationError('Invalid url');
    }

    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
        throw new ValidationError('Invalid url');
    }
}

function checkContentType(contentType: string): void {
    if (!(CONTENT_TYPES as readonly string[]).includes(contentType)) {
        throw new ValidationError('Invalid content type');
    }
}

/** Gitea's GlobPattern binding: a pattern whose brackets or braces do not close is refused. */
function checkBranchFilter(filter: string | undefined): void {
    let depth = 0;
    let inClass = false;
    for (const character of filter ?? '') {
        if (character === '[') {
            inClass = true;
        } else if (character === ']') {
            inClass = false;
        } else if (character === '{' && !inClass) {
            depth += 1;
        } else if (character === '}' && !inClass) {
            depth -= 1;
        }

        if (depth < 0) {
            break;
        }
    }

    if (depth !== 0 || inClass) {
        throw new ValidationError('[BranchFilter]: GlobPattern');
    }
}

function systemFlag(config: Record<string, string>): boolean {
    const value = config.is_system_webhook;
    if (value === undefined || value === '') {
        return false;
    }

    const parsed = parseGoBool(value);
    if (parsed === undefined) {
        throw new ValidationError('Invalid is_system_webhook value');
    }

    return parsed;
}

/** System hooks (fired for every repository) and default hooks (copied into new repositories), and their deliveries. */
export class WebhookService extends Service {
    #seal(value: string | undefined, purpose: string): string | null {
        return value ? this.server.app.sealer.seal(value, purpose) : null;
    }

    async list(kind: HookKind, paging: Paging): Promise<{ rows: HookRow[]; total: number }> {
        const query = this.knex('webhooks').whereNull('repo_id');
        if (kind !== 'all') {
            query.where({ is_system_webhook: kind === 'system' });
        }

        const total = Number((await query.clone().count({ count: '*' }).first())?.count ?? 0);
        const rows = await query.orderBy('id', 'asc').limit(paging.limit).offset(paging.offset);
        return { rows: rows.map(toHookRow), total };
    }

    /** A system or default hook; repositories' own hooks are not reachable here. */
    async get(id: number): Promise<HookRow> {
        const raw = await this.knex('webhooks').where({ id }).whereNull('repo_id').first();
        if (!raw) {
            throw new NotFoundError();
        }

        return toHookRow(raw);
    }

    async create(input: CreateHookInput): Promise<HookRow> {
        for (const name of ['url', 'content_type']) {
            if (input.config[name] === undefined) {
                throw new ValidationError(`Missing config option: ${name}`);
            }
        }

        checkContentType(input.config.content_type as string);
        checkUrl(input.config.url as string);
        checkBranchFilter(input.branch_filter);
        const created = now();
        const [id] = await this.knex('webhooks').insert({
            repo_id: null,
            is_system_webhook: systemFlag(input.config),
            type: input.type,
            name: input.name ?? '',
            url: input.config.url,
            content_type: input.config.content_type,
            http_method: 'POST',
            secret_sealed: this.#seal(input.config.secret, SECRET_PURPOSE),
            authorization_header_sealed: this.#seal(input.authorization_header, AUTHORIZATION_PURPOSE),
            events: JSON.stringify(expandEvents(input.events)),
            branch_filter: input.branch_filter ?? '',
            is_active: input.active ?? false,
            created_at: created,
            updated_at: created,
        });
        return await this.get(Number(id));
    }

    /** As Gitea: the events are replaced (`push` when none are given); other fields change only when given. */
    async edit(id: number, input: EditHookInput): Promise<HookRow> {
        await this.get(id);
        const changes: Record<string, unknown> = { events: JSON.stringify(expandEvents(input.events)), updated_at: now() };
        const config = input.config ?? {};
        if (config.url !== undefined) {
            checkUrl(config.url);
            changes.url = config.url;
        }

        if (config.content_type !== undefined) {
            checkContentType(config.content_type);
            changes.content_type = config.content_type;
        }

        if (config.secret !== undefined) {
            changes.secret_sealed = this.#seal(config.secret, SECRET_PURPOSE);
        }

        if (input.authorization_header !== undefined) {
            changes.authorization_header_sealed = this.#seal(input.authorization_header, AUTHORIZATION_PURPOSE);
        }

        if (input.branch_filter !== undefined) {
            checkBranchFilter(input.branch_filter);
            changes.branch_filter = input.branch_filter;
        }

        for (const [field, column] of [
            ['active', 'is_active'],
            ['name', 'name'],
        ] as const) {
            if (input[field] !== undefined) {
                changes[column] = input[field];
            }
        }

        await this.knex('webhooks').where({ id }).update(changes);
        return await this.get(id);
    }

    async delete(id: number): Promise<void> {
        const deleted = await this.knex('webhooks').where({ id }).whereNull('repo_id').delete();
        if (deleted === 0) {
            throw new NotFoundError();
        }
    }

    /** Gitea copies the default hooks into each new repository, where they then live on their own. */
    async copyDefaultHooks(repositoryId: number, trx: Knex = this.knex): Promise<void> {
        const defaults = await trx('webhooks').whereNull('repo_id').where({ is_system_webhook: false });
        const created = now();
        const copies = defaults.map((hook: Record<string, unknown>) => {
            const { id: _id, ...rest } = hook;
            return { ...rest, repo_id: repositoryId, created_at: created, updated_at: created };
        });
        if (copies.length > 0) {
            await trx('webhooks').insert(copies);
        }
    }

    /**
     * Queues one delivery per active hook that listens to the event: system hooks, and the repository's own hooks
     * when a repository is given. Call `deliverSoon()` once the transaction has committed.
     */
    async enqueue(trx: Knex, repositoryId: number | null, event: HookEvent, eventType: string, payload: object): Promise<number> {
        const hooks = await trx('webhooks')
            .where({ is_active: true })
            .whereIn('type', DELIVERED_TYPES)
            .where((where) => {
                where.where((system) => system.whereNull('repo_id').where({ is_system_webhook: true }));
                if (repositoryId !== null) {
                    where.orWhere({ repo_id: repositoryId });
                }
            })
            .select('id', 'events');
        const listening = hooks.filter((hook: { events: string }) => (JSON.parse(hook.events) as string[]).includes(event));
        if (listening.length === 0) {
            return 0;
        }

        const content = JSON.stringify(payload, null, 2);
        const created = now();
        await trx('hook_tasks').insert(
            listening.map((hook: { id: number }) => ({
                hook_id: hook.id,
                repo_id: repositoryId ?? 0,
                uuid: Crypto.randomUUID(),
                event_type: eventType,
                payload_content: content,
                next_attempt_at: created,
                created_at: created,
            })),
        );
        return listening.length;
    }

    /** Wakes the delivery worker (when the server is running; otherwise it starts with the server). */
    deliverSoon(): void {
        deliveryScheduler(this.server).kick();
    }
}

export const webhooks = defineService<WebhookService>('webhooks', (owner) => new WebhookService(owner));
