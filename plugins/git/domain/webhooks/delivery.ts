/** Sending queued deliveries (hook_tasks): runs in the delivery worker, on the worker's own database handle. */
import Crypto from 'node:crypto';

import type { Knex } from 'knex';

import type { WebhookConfig } from '../../../../lib/config.ts';
import type { Sealer } from '../../../../lib/crypto.ts';
import { now } from '../../../../lib/database.ts';
import { type WebhookOutcome as Outcome, WebhookSender } from '../../../../lib/webhook-sender.ts';
import { headerEvent } from './events.ts';
import { AUTHORIZATION_PURPOSE, SECRET_PURPOSE } from './hook-service.ts';

const BATCH_SIZE = 200;
const CONCURRENCY = 16;
/** The worker waits for retries due this soon instead of ending and leaving them to the next sweep. */
const WAIT_FOR_RETRIES_MS = 5_000;

interface TaskRow {
    id: number;
    hook_id: number;
    uuid: string;
    event_type: string;
    payload_content: string;
    attempts: number;
}

/** How long a claimed delivery is another process's to send (its timeout and then some): past it, it is due again. */
const CLAIM_MARGIN_MS = 30_000;

interface HookTarget {
    url: string;
    contentType: string;
    secret: string;
    authorization: string;
}

export interface DeliveryContext {
    knex: Knex;
    sealer: Sealer;
    settings: WebhookConfig;
}

function openSealed(sealer: Sealer, sealed: string | null, purpose: string): string {
    return sealed ? sealer.open(sealed, purpose) : '';
}

async function loadTarget(context: DeliveryContext, hookId: number): Promise<HookTarget | undefined> {
    const hook = await context.knex('webhooks').where({ id: hookId }).first();
    if (!hook) {
        return undefined;
    }

    return {
        url: String(hook.url),
        contentType: String(hook.content_type),
        secret: openSealed(context.sealer, hook.secret_sealed, SECRET_PURPOSE),
        authorization: openSealed(context.sealer, hook.authorization_header_sealed, AUTHORIZATION_PURPOSE),
    };
}

/** Gitea's delivery headers; the signature is the HMAC-SHA256 of the exact payload with the hook's secret. */
function requestHeaders(task: TaskRow, target: HookTarget, body: string): Record<string, string> {
    const signature = target.secret ? Crypto.createHmac('sha256', target.secret).update(task.payload_content).digest('hex') : '';
    const event = headerEvent(task.event_type);
    const headers: Record<string, string> = {
        'Content-Type': target.contentType === 'form' ? 'application/x-www-form-urlencoded' : 'application/json',
        'Content-Length': String(Buffer.byteLength(body)),
        'User-Agent': 'Gatehouse-Hookshot',
        'X-Gitea-Delivery': task.uuid,
        'X-Gitea-Event': event,
        'X-Gitea-Event-Type': task.event_type,
        'X-Gitea-Signature': signature,
        'X-Gogs-Delivery': task.uuid,
        'X-Gogs-Event': event,
        'X-Gogs-Event-Type': task.event_type,
        'X-Gogs-Signature': signature,
        'X-Hub-Signature-256': signature ? `sha256=${signature}` : '',
        'X-GitHub-Delivery': task.uuid,
        'X-GitHub-Event': event,
        'X-GitHub-Event-Type': task.event_type,
    };
    if (target.authorization) {
        headers.Authorization = target.authorization;
    }

    return headers;
}

/** What is kept of a request: never the authorization header's value. */
function recordedRequest(url: string, headers: Record<string, string>): string {
    const shown = { ...headers };
    if (shown.Authorization) {
        shown.Authorization = '(hidden)';
    }

    return JSON.stringify({ url, http_method: 'POST', headers: shown });
}

export class Deliverer {
    readonly #context: DeliveryContext;
    readonly #sender: WebhookSender;
    readonly #targets = new Map<number, Promise<HookTarget | undefined>>();

    constructor(context: DeliveryContext) {
        this.#context = context;
        this.#sender = new WebhookSender(context.settings);
    }

    close(): void {
        this.#sender.close();
    }

    #target(hookId: number): Promise<HookTarget | undefined> {
        let target = this.#targets.get(hookId);
        if (!target) {
            target = loadTarget(this.#context, hookId);
            this.#targets.set(hookId, target);
        }

        return target;
    }

    async deliver(task: TaskRow): Promise<boolean> {
        const target = await this.#target(task.hook_id);
        if (!target) {
            await this.#context.knex('hook_tasks').where({ id: task.id }).update({ is_delivered: true, delivered_at: now() });
            return false;
        }

        const body =
            target.contentType === 'form' ? new URLSearchParams({ payload: task.payload_content }).toString() : task.payload_content;
        const headers = requestHeaders(task, target, body);
        const started = Date.now();
        let outcome: Outcome;
        try {
            outcome = await this.#sender.post(new URL(target.url), headers, body);
        } catch (error) {
            outcome = { status: 0, body: `Delivery: ${(error as Error).message}`, headers: {} };
        }

        const succeeded = outcome.status >= 200 && outcome.status < 300;
        await this.#record(task, target.url, headers, outcome, Date.now() - started, succeeded);
        return succeeded;
    }

    async #record(task: TaskRow, url: string, headers: Record<string, string>, outcome: Outcome, duration: number, succeeded: boolean) {
        const { maxAttempts, retryBackoffMs } = this.#context.settings;
        const attempts = task.attempts + 1;
        const finished = succeeded || attempts >= maxAttempts;
        const deliveredAt = now();
        await this.#context
            .knex('hook_tasks')
            .where({ id: task.id })
            .update({
                attempts,
                is_delivered: finished,
                is_succeed: succeeded,
                next_attempt_at: finished ? deliveredAt : deliveredAt + retryBackoffMs * 2 ** (attempts - 1),
                request_info: recordedRequest(url, headers),
                response_info: JSON.stringify({ status: outcome.status, headers: outcome.headers, body: outcome.body }),
                duration_ms: duration,
                delivered_at: deliveredAt,
            });
    }

    /**
     * The due deliveries this process has claimed: each moved out of reach (its next attempt set past its sending)
     * by a conditional update that only one process wins, so that every Gatehouse on the database may send
     * deliveries and each is sent once. A process that dies with a claim leaves it due again once the claim lapses.
     */
    async #dueTasks(): Promise<TaskRow[]> {
        const knex = this.#context.knex;
        const rows = (await knex('hook_tasks')
            .where({ is_delivered: false })
            .where('next_attempt_at', '<=', now())
            .orderBy('id', 'asc')
            .limit(BATCH_SIZE)
            .select('id', 'hook_id', 'uuid', 'event_type', 'payload_content', 'attempts', 'next_attempt_at')) as Array<
            Record<string, unknown>
        >;
        const claimedUntil = now() + this.#context.settings.deliverTimeoutMs + CLAIM_MARGIN_MS;
        const claimed: TaskRow[] = [];
        for (const row of rows) {
            const won = await knex('hook_tasks')
                .where({ id: row.id, is_delivered: false, next_attempt_at: row.next_attempt_at })
                .update({ next_attempt_at: claimedUntil });
            if (won === 1) {
                claimed.push({
                    ...(row as unknown as TaskRow),
                    id: Number(row.id),
                    hook_id: Number(row.hook_id),
                    attempts: Number(row.attempts),
                });
            }
        }

        return claimed;
    }

    async #nextRetryIn(): Promise<number | undefined> {
        const row = await this.#context.knex('hook_tasks').where({ is_delivered: false }).min({ next: 'next_attempt_at' }).first();
        return row?.next === null || row?.next === undefined ? undefined : Number(row.next) - now();
    }

    /** Sends every due delivery, CONCURRENCY at a time; waits for retries due soon; returns how many succeeded. */
    async run(): Promise<number> {
        let succeeded = 0;
        for (;;) {
            const tasks = await this.#dueTasks();
            if (tasks.length === 0) {
                const wait = await this.#nextRetryIn();
                if (wait === undefined || wait > WAIT_FOR_RETRIES_MS) {
                    return succeeded;
                }

                await new Promise((resolve) => setTimeout(resolve, Math.max(wait, 10)));
                continue;
            }

            succeeded += await this.#deliverAll(tasks);
        }
    }

    async #deliverAll(tasks: TaskRow[]): Promise<number> {
        let next = 0;
        let succeeded = 0;
        const lane = async () => {
            while (next < tasks.length) {
                const task = tasks[next] as TaskRow;
                next += 1;
                if (await this.deliver(task)) {
                    succeeded += 1;
                }
            }
        };
        await Promise.all(Array.from({ length: Math.min(CONCURRENCY, tasks.length) }, lane));
        return succeeded;
    }
}
