import { now, toRfc3339 } from '../../../../lib/database.ts';
import type { Paging } from '../../../../lib/paging.ts';
import { defineService } from '../../../../lib/services.ts';
import { Service } from '../../../../lib/service.ts';

export interface AuditEntry {
    actor?: { id: number; email: string };
    action: string;
    target?: string;
    outcome?: 'success' | 'failure';
    clientAddress?: string;
    /** Plain facts only: callers never pass passwords, tokens, codes or secrets here. */
    details?: Record<string, string | number | boolean | null>;
}

export interface AuditFilters {
    actor?: string;
    action?: string;
    target?: string;
    outcome?: string;
    since?: string;
    until?: string;
}

const SECRET_KEYS = /pass|secret|token|code|key|cookie|session/i;

/** Who did what, to what, from where and when: every sign-in, user, role and setting change, and app operation. */
export class AuditService extends Service {
    async record(entry: AuditEntry): Promise<void> {
        const details = Object.fromEntries(Object.entries(entry.details ?? {}).filter(([key]) => !SECRET_KEYS.test(key)));
        await this.server.app.knex('dp_audit').insert({
            at: now(),
            actor_id: entry.actor?.id ?? null,
            actor_email: entry.actor?.email ?? '',
            action: entry.action,
            target: (entry.target ?? '').slice(0, 191),
            outcome: entry.outcome ?? 'success',
            client_address: (entry.clientAddress ?? '').slice(0, 64),
            details: Object.keys(details).length > 0 ? JSON.stringify(details) : null,
        });
    }

    async list(filters: AuditFilters, paging: Paging) {
        const query = this.server.app.knex('dp_audit');
        if (filters.actor) query.where('actor_email', filters.actor.toLowerCase());
        if (filters.action) query.where('action', filters.action);
        if (filters.target) query.where('target', filters.target);
        if (filters.outcome) query.where('outcome', filters.outcome);
        if (filters.since) query.where('at', '>=', Date.parse(filters.since));
        if (filters.until) query.where('at', '<=', Date.parse(filters.until));
        const total = Number((await query.clone().count({ count: '*' }).first())?.count ?? 0);
        const rows = await query.orderBy('id', 'desc').limit(paging.limit).offset(paging.offset);
        const entries = rows.map((row) => ({
            id: Number(row.id),
            at: toRfc3339(Number(row.at)),
            actor: row.actor_id === null ? null : { id: Number(row.actor_id), email: String(row.actor_email) },
            action: String(row.action),
            target: String(row.target),
            outcome: String(row.outcome),
            clientAddress: String(row.client_address),
            details: row.details ? (JSON.parse(String(row.details)) as Record<string, unknown>) : {},
        }));
        return { entries, total };
    }
}

export const audit = defineService<AuditService>('audit', (owner) => new AuditService(owner));
