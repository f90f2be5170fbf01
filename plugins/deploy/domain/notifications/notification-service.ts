import Crypto from 'node:crypto';

import type { Server } from '@hapi/hapi';

import { isUniqueViolation, now } from '../../../../lib/database.ts';
import { sendMail } from '../../../../lib/email.ts';
import { ValidationError } from '../../../../lib/errors.ts';
import type { Paging } from '../../../../lib/paging.ts';
import { defineService } from '../../../../lib/services.ts';
import { HostRefusedError, WebhookSender } from '../../../../lib/webhook-sender.ts';
import type { ExpiringCertificate } from './certificate-expiry.ts';
import { Service } from '../../../../lib/service.ts';
import { cell, nullable, rowReader } from '../../../../lib/row-reader.ts';

/** The events a user may be told of. */
export const NOTIFICATION_KINDS = [
    'run-failed',
    'certificate-expiring',
    'certificate-renewal-failed',
    'container-unhealthy',
    'update-available',
    'backup-failed',
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export interface NotificationEvent {
    kind: NotificationKind;
    /** The app it is about, when it is about one. */
    app: string | null;
    /** One line, the e-mail's subject. */
    summary: string;
    /** Plain facts (never a secret): in the e-mail's text and the webhook's body. */
    details: Record<string, string | number | boolean | null>;
}

export interface NotificationSettings {
    email: { enabled: boolean; address: string; kinds: NotificationKind[] };
    webhook: { url: string | null; secretSet: boolean; kinds: NotificationKind[] };
}

export interface NotificationSettingsChange {
    email?: { enabled?: boolean; kinds?: NotificationKind[] };
    /** `url: ''` removes the webhook; a new URL needs a secret, given now or before. */
    webhook?: { url?: string; secret?: string; kinds?: NotificationKind[] };
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'refused';

export interface Delivery {
    id: number;
    kind: string;
    app: string | null;
    summary: string;
    user: { id: number | null; email: string };
    channel: 'email' | 'webhook';
    target: string;
    status: DeliveryStatus;
    attempts: number;
    error: string | null;
    createdAt: string;
    updatedAt: string;
}

/** The header carrying the body's HMAC-SHA256 (hex) with the user's secret, as X-Gitea-Signature does. */
export const SIGNATURE_HEADER = 'X-Gatehouse-Signature';
const SECRET_PURPOSE = 'dp_notification_settings:webhook_secret';
const MAX_SECRET_LENGTH = 255;

function kindsOf(stored: unknown): NotificationKind[] {
    const names = String(stored ?? '')
        .split(',')
        .filter((name) => name !== '');
    return NOTIFICATION_KINDS.filter((kind) => names.includes(kind));
}

/** A URL as the deliveries table shows it: no user name, password, query or fragment. */
function shownUrl(url: string): string {
    try {
        const parsed = new URL(url);
        return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
    } catch {
        return '(not a URL)';
    }
}

function checkedWebhookUrl(url: string): string {
    let parsed: URL;
    try {
        parsed = new URL(url);
    } catch {
        throw new ValidationError('webhook.url: not a URL');
    }

    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
        throw new ValidationError('webhook.url: only http and https URLs');
    }

    return url;
}

const readUser = rowReader<Delivery['user']>({ id: ['user_id', nullable(cell.number)], email: ['user_email', cell.string] });
const readDelivery = rowReader<Omit<Delivery, 'user'>>({
    id: ['id', cell.number],
    kind: ['event_kind', cell.string],
    app: ['app_name', nullable(cell.string)],
    summary: ['summary', cell.string],
    channel: ['channel', cell.as<Delivery['channel']>()],
    target: ['target', cell.string],
    status: ['status', cell.as<DeliveryStatus>()],
    attempts: ['attempts', cell.number],
    error: ['error', nullable(cell.string)],
    createdAt: ['created_at', cell.time],
    updatedAt: ['updated_at', cell.time],
});

function toDelivery(row: Record<string, unknown>): Delivery {
    return { ...readDelivery(row), user: readUser(row) };
}

/** The event a delivery row was recorded for, as its sending needs it again. */
const eventOf = rowReader<NotificationEvent>({
    kind: ['event_kind', cell.as<NotificationKind>()],
    app: ['app_name', nullable(cell.string)],
    summary: ['summary', cell.string],
    details: ['details', (value) => (value ? cell.json<NotificationEvent['details']>()(value) : {})],
});

/** Beyond the longest an attempt may take, before another server may take up a delivery held by one that died. */
const HOLD_MARGIN_MS = 60_000;
/** Deliveries taken up per look. */
const RESUME_BATCH = 50;

interface Recipient {
    userId: number;
    email: string;
    channel: 'email' | 'webhook';
    /** The e-mail address, or the webhook's URL. */
    target: string;
    secret: string;
}

/**
 * Notifications: each user chooses which events reach them by e-mail (SMTP_*) and by a signed webhook (sent with the
 * git service's allow-list, WEBHOOK_ALLOWED_HOST_LIST, and retried as its deliveries are). Every delivery is a row of
 * dp_notification_deliveries, written before the first attempt and after each one. All roles see every app, so every
 * user who chose an event's kind hears of it.
 */
export class NotificationService extends Service {
    readonly #pending = new Set<Promise<void>>();
    /** The waits between attempts, ended early when the server stops. */
    readonly #waits = new Set<() => void>();
    #stopping = false;
    #sender: WebhookSender | undefined;

    constructor(server: Server) {
        super(server);
    }
    get #webhookSender(): WebhookSender {
        this.#sender ??= new WebhookSender(this.server.app.config.webhooks, { maxRedirects: 5 });
        return this.#sender;
    }

    async settingsFor(user: { id: number; email: string }): Promise<NotificationSettings> {
        const row = await this.knex('dp_notification_settings').where({ user_id: user.id }).first();
        return {
            email: { enabled: Boolean(row?.email_enabled ?? false), address: user.email, kinds: kindsOf(row?.email_kinds) },
            webhook: {
                url: row?.webhook_url ? String(row.webhook_url) : null,
                secretSet: Boolean(row?.webhook_secret_sealed),
                kinds: kindsOf(row?.webhook_kinds),
            },
        };
    }

    async updateSettings(user: { id: number; email: string }, change: NotificationSettingsChange): Promise<NotificationSettings> {
        const current = await this.knex('dp_notification_settings').where({ user_id: user.id }).first();
        const update: Record<string, unknown> = { updated_at: now() };
        if (change.email?.enabled !== undefined) update.email_enabled = change.email.enabled;
        if (change.email?.kinds !== undefined) update.email_kinds = kindsOf(change.email.kinds.join(',')).join(',');
        if (change.webhook?.kinds !== undefined) update.webhook_kinds = kindsOf(change.webhook.kinds.join(',')).join(',');
        const secret = change.webhook?.secret;
        if (secret !== undefined) {
            if (secret.length < 8 || secret.length > MAX_SECRET_LENGTH) {
                throw new ValidationError(`webhook.secret: from 8 to ${MAX_SECRET_LENGTH} characters`);
            }

            update.webhook_secret_sealed = this.server.app.sealer.seal(secret, SECRET_PURPOSE);
        }

        const url = change.webhook?.url;
        if (url === '') {
            update.webhook_url = null;
            update.webhook_secret_sealed = null;
        } else if (url !== undefined) {
            update.webhook_url = checkedWebhookUrl(url);
            if (secret === undefined && !current?.webhook_secret_sealed) {
                throw new ValidationError('webhook.secret: a webhook needs a secret to sign its deliveries with');
            }
        }

        if (current) {
            await this.knex('dp_notification_settings').where({ user_id: user.id }).update(update);
        } else {
            await this.knex('dp_notification_settings').insert({ user_id: user.id, ...update });
        }

        return await this.settingsFor(user);
    }

    /** Who hears of the event, on which channel: enabled users who chose its kind there. */
    async #recipients(kind: NotificationKind): Promise<Recipient[]> {
        const rows = await this.knex('dp_notification_settings as s')
            .join('dp_users as u', 'u.id', 's.user_id')
            .where('u.disabled', false)
            .select('u.id', 'u.email', 's.email_enabled', 's.email_kinds', 's.webhook_url', 's.webhook_secret_sealed', 's.webhook_kinds');
        const recipients: Recipient[] = [];
        for (const row of rows) {
            const base = { userId: Number(row.id), email: String(row.email) };
            if (row.email_enabled && kindsOf(row.email_kinds).includes(kind)) {
                recipients.push({ ...base, channel: 'email', target: base.email, secret: '' });
            }

            if (row.webhook_url && row.webhook_secret_sealed && kindsOf(row.webhook_kinds).includes(kind)) {
                const secret = this.server.app.sealer.open(String(row.webhook_secret_sealed), SECRET_PURPOSE);
                recipients.push({ ...base, channel: 'webhook', target: String(row.webhook_url), secret });
            }
        }

        return recipients;
    }

    /**
     * Records a delivery for each user who chose the event's kind, and sends them in the background (retried with the
     * webhooks' backoff); answers once they are recorded. `settled()` waits for the sending.
     */
    async notify(event: NotificationEvent): Promise<number> {
        const recording = this.#notify(event);
        this.#track(recording.then(() => undefined));
        return await recording;
    }

    #track(work: Promise<void>): void {
        const tracked = work.catch((error: unknown) =>
            this.server.log(['error', 'deploy', 'notifications'], `a notification failed: ${(error as Error).message}`),
        );
        this.#pending.add(tracked);
        void tracked.finally(() => this.#pending.delete(tracked));
    }

    async #notify(event: NotificationEvent): Promise<number> {
        const recipients = await this.#recipients(event.kind);
        for (const recipient of recipients) {
            const at = now();
            const [id] = await this.knex('dp_notification_deliveries').insert({
                event_kind: event.kind,
                app_name: event.app,
                summary: event.summary.slice(0, 255),
                user_id: recipient.userId,
                user_email: recipient.email,
                channel: recipient.channel,
                target: recipient.channel === 'webhook' ? shownUrl(recipient.target).slice(0, 2048) : recipient.target,
                status: 'pending',
                attempts: 0,
                details: JSON.stringify(event.details),
                held_until: at + this.#holdMs,
                created_at: at,
                updated_at: at,
            });
            this.#track(this.#deliver(Number(id), event, recipient));
        }

        return recipients.length;
    }

    /** Waits for the deliveries being sent (at stop, and in tests). */
    async settled(): Promise<void> {
        while (this.#pending.size > 0) {
            await Promise.all([...this.#pending]);
        }
    }

    /** Ends the waits between attempts (those deliveries stay `pending`), waits for the attempts under way, closes the sockets. */
    async stop(): Promise<void> {
        this.#stopping = true;
        for (const wake of this.#waits) wake();
        await this.settled();
        this.#sender?.close();
        this.#sender = undefined;
    }

    /** How long a server holds a delivery for one attempt: longer than any attempt may take. */
    get #holdMs(): number {
        const { webhooks, smtp } = this.server.app.config;
        return Math.max(webhooks.deliverTimeoutMs, smtp.timeoutMs) + HOLD_MARGIN_MS;
    }

    /**
     * Attempts the delivery from attempt `first` on, waiting the webhooks' backoff between attempts. The row says when
     * the next attempt is due and holds the delivery for this server meanwhile; a server that stops lets go of it, and
     * whichever server looks for due deliveries next (resumeDeliveries) takes it up, so a restart loses no retry.
     */
    async #deliver(id: number, event: NotificationEvent, recipient: Recipient, first = 1): Promise<void> {
        const { maxAttempts, retryBackoffMs } = this.server.app.config.webhooks;
        const send =
            recipient.channel === 'email' ? () => this.#sendEmail(event, recipient) : () => this.#sendWebhook(id, event, recipient);
        for (let attempt = first; ; attempt += 1) {
            let error: Error | undefined;
            try {
                await send();
            } catch (caught) {
                error = caught as Error;
            }

            const refused = error instanceof HostRefusedError;
            const finished = error === undefined || refused || attempt >= maxAttempts;
            const status: DeliveryStatus = error === undefined ? 'delivered' : refused ? 'refused' : finished ? 'failed' : 'pending';
            const waitMs = retryBackoffMs * 2 ** (attempt - 1);
            const at = now();
            const schedule = finished
                ? { next_attempt_at: null, held_until: null }
                : { next_attempt_at: at + waitMs, held_until: this.#stopping ? null : at + waitMs + this.#holdMs };
            await this.knex('dp_notification_deliveries')
                .where({ id })
                .update({ status, attempts: attempt, error: error ? error.message.slice(0, 1024) : null, updated_at: at, ...schedule });
            if (finished || this.#stopping) {
                return;
            }

            await new Promise<void>((resolve) => {
                const wake = () => {
                    clearTimeout(timer);
                    this.#waits.delete(wake);
                    resolve();
                };
                const timer = setTimeout(wake, waitMs);
                this.#waits.add(wake);
            });
            if (this.#stopping) {
                // Let go: the next server to look takes it up when it is due.
                await this.knex('dp_notification_deliveries').where({ id, status: 'pending' }).update({ held_until: null });
                return;
            }
        }
    }

    /**
     * Takes up the pending deliveries that are due and that no server holds (their server stopped, or was killed
     * during an attempt and its hold ran out): each is held first, so that one server sends it, then attempted from
     * where it was. Answers how many were taken up.
     */
    async resumeDeliveries(): Promise<number> {
        if (this.#stopping) return 0;
        const at = now();
        const due = (await this.knex('dp_notification_deliveries')
            .where({ status: 'pending' })
            .andWhere((query) => query.whereNull('next_attempt_at').orWhere('next_attempt_at', '<=', at))
            .andWhere((query) => query.whereNull('held_until').orWhere('held_until', '<', at))
            .orderBy('id')
            .limit(RESUME_BATCH)) as Array<Record<string, unknown>>;
        let resumed = 0;
        for (const row of due) {
            const held = await this.knex('dp_notification_deliveries')
                .where({ id: row.id, status: 'pending' })
                .andWhere((query) => query.whereNull('held_until').orWhere('held_until', '<', at))
                .update({ held_until: at + this.#holdMs });
            if (held !== 1) continue;
            const recipient = await this.#recipientOf(row);
            if (!recipient) {
                await this.knex('dp_notification_deliveries').where({ id: row.id }).update({
                    status: 'failed',
                    error: 'the user no longer asks for it there (their notification settings changed since)',
                    next_attempt_at: null,
                    held_until: null,
                    updated_at: now(),
                });
                continue;
            }

            this.#track(this.#deliver(Number(row.id), eventOf(row), recipient, Number(row.attempts) + 1));
            resumed += 1;
        }

        return resumed;
    }

    /** The delivery's recipient as the user's settings say now: none when they no longer send it to the same place. */
    async #recipientOf(row: Record<string, unknown>): Promise<Recipient | undefined> {
        const recipients = await this.#recipients(String(row.event_kind) as NotificationKind);
        return recipients.find(
            (recipient) =>
                recipient.userId === Number(row.user_id) &&
                recipient.channel === row.channel &&
                (recipient.channel === 'webhook' ? shownUrl(recipient.target).slice(0, 2048) : recipient.target) === row.target,
        );
    }

    async #sendEmail(event: NotificationEvent, recipient: Recipient): Promise<void> {
        const facts = Object.entries(event.details).map(([name, value]) => `${name}: ${String(value)}`);
        const text = [event.summary, '', ...(event.app ? [`App: ${event.app}`] : []), ...facts, '', this.server.app.config.publicUrl];
        await sendMail(this.server.app.config.smtp, {
            to: recipient.target,
            subject: `[Gatehouse] ${event.summary}`,
            text: text.join('\n'),
        });
    }

    async #sendWebhook(id: number, event: NotificationEvent, recipient: Recipient): Promise<void> {
        const body = JSON.stringify({
            kind: event.kind,
            app: event.app,
            summary: event.summary,
            details: event.details,
            delivery: id,
            sentAt: new Date().toISOString(),
        });
        const signature = Crypto.createHmac('sha256', recipient.secret).update(body).digest('hex');
        const outcome = await this.#webhookSender.post(
            new URL(recipient.target),
            {
                'Content-Type': 'application/json',
                'Content-Length': String(Buffer.byteLength(body)),
                'User-Agent': 'Gatehouse-Notifications',
                'X-Gatehouse-Event': event.kind,
                'X-Gatehouse-Delivery': String(id),
                [SIGNATURE_HEADER]: signature,
                'X-Hub-Signature-256': `sha256=${signature}`,
            },
            body,
        );
        if (outcome.status < 200 || outcome.status >= 300) {
            throw new Error(`the webhook answered ${outcome.status}`);
        }
    }

    /**
     * Warns of each certificate that expires soon, at most once per certificate and day: the day's row in
     * dp_certificate_warnings is taken first (one process wins it), and only its winner notifies.
     */
    async certificatesExpiring(certificates: ExpiringCertificate[], at = Date.now()): Promise<string[]> {
        const warning = this.#warnOfCertificates(certificates, at);
        this.#track(warning.then(() => undefined));
        return await warning;
    }

    async #warnOfCertificates(certificates: ExpiringCertificate[], at: number): Promise<string[]> {
        const day = new Date(at).toISOString().slice(0, 10);
        const warned: string[] = [];
        for (const certificate of certificates) {
            try {
                await this.knex('dp_certificate_warnings').insert({ domain: certificate.domain.slice(0, 253), day, created_at: now() });
            } catch (error) {
                if (isUniqueViolation(error)) {
                    continue;
                }

                throw error;
            }

            const app = await this.knex('dp_apps').where({ domain: certificate.domain }).first('name');
            const expired = certificate.daysLeft < 0;
            await this.notify({
                kind: 'certificate-expiring',
                app: app ? String(app.name) : null,
                summary: expired
                    ? `the certificate of ${certificate.domain} has expired`
                    : `the certificate of ${certificate.domain} expires in ${certificate.daysLeft} day${certificate.daysLeft === 1 ? '' : 's'}`,
                details: { domain: certificate.domain, notAfter: certificate.notAfter, daysLeft: certificate.daysLeft },
            });
            warned.push(certificate.domain);
        }

        return warned;
    }

    /** A certificate the scheduled renewal could not renew: the app it belongs to, and the CA's or the network's answer. */
    async certificateRenewalFailed(domain: string, error: string): Promise<number> {
        const app = await this.knex('dp_apps').where({ domain }).first('name');
        return await this.notify({
            kind: 'certificate-renewal-failed',
            app: app ? String(app.name) : null,
            summary: `the certificate of ${domain} could not be renewed`,
            details: { domain, error: error.slice(0, 1000) },
        });
    }

    async deliveries(paging: Paging): Promise<{ deliveries: Delivery[]; total: number }> {
        const query = this.knex('dp_notification_deliveries');
        const total = Number((await query.clone().count({ count: '*' }).first())?.count ?? 0);
        const rows = await query.orderBy('id', 'desc').limit(paging.limit).offset(paging.offset);
        return { deliveries: rows.map(toDelivery), total };
    }
}

export const notifications = defineService<NotificationService>('deploy-notifications', (owner) => new NotificationService(owner));
