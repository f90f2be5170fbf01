/**
 * The tickets that open a terminal's WebSocket. A browser sends no CSRF header on a WebSocket, so the socket is opened
 * with a ticket asked for by an ordinary POST (session cookie, CSRF header, role): random, used once, valid 30 s, bound
 * to who asked, the app, the service and the container. Only its SHA-256 is stored, in the database, so that the
 * socket may reach any server on it.
 */
import Crypto from 'node:crypto';

import type { Knex } from 'knex';

import { cell, rowReader } from '../../../../lib/row-reader.ts';

/** How long a ticket may wait for its socket. */
export const TICKET_SECONDS = 30;

const TABLE = 'dp_terminal_tickets';
/** 32 random bytes in base64url. */
const TICKET_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export interface TicketBinding {
    userId: number;
    app: string;
    service: string;
    /** The container's id. */
    container: string;
    /** Where the ticket was asked from, for the session's audit entry. */
    clientAddress: string;
}

const toBinding = rowReader<TicketBinding>({
    userId: ['user_id', cell.number],
    app: ['app_name', cell.string],
    service: ['service', cell.string],
    container: ['container', cell.string],
    clientAddress: ['client_address', cell.string],
});

function digest(ticket: string): string {
    return Crypto.createHash('sha256').update(ticket).digest('hex');
}

export class TerminalTickets {
    constructor(
        private readonly knex: Knex,
        /** The time in ms since the epoch (the tests give their own clock to see a ticket lapse). */
        private readonly clock: () => number = Date.now,
    ) {}

    /** A new ticket for `binding`, and when it lapses; tickets that have lapsed are removed meanwhile. */
    async issue(binding: TicketBinding): Promise<{ ticket: string; expiresAt: number }> {
        const ticket = Crypto.randomBytes(32).toString('base64url');
        const now = this.clock();
        const expiresAt = now + TICKET_SECONDS * 1000;
        await this.knex(TABLE).where('expires_at', '<=', now).delete();
        await this.knex(TABLE).insert({
            hash: digest(ticket),
            user_id: binding.userId,
            app_name: binding.app,
            service: binding.service,
            container: binding.container,
            client_address: binding.clientAddress.slice(0, 64),
            expires_at: expiresAt,
        });
        return { ticket, expiresAt };
    }

    /**
     * What the ticket was given for, once: undefined for a ticket that is unknown, used already or lapsed. The delete
     * that takes the row claims it, so two sockets racing with one ticket get it once between them.
     */
    async redeem(ticket: string): Promise<TicketBinding | undefined> {
        if (!TICKET_SHAPE.test(ticket)) {
            return undefined;
        }

        const hash = digest(ticket);
        const row = (await this.knex(TABLE).where({ hash }).first()) as Record<string, unknown> | undefined;
        if (!row) {
            return undefined;
        }

        const claimed = await this.knex(TABLE).where({ hash }).delete();
        if (claimed !== 1 || Number(row.expires_at) <= this.clock()) {
            return undefined;
        }

        return toBinding(row);
    }
}
