import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { TICKET_SECONDS, type TicketBinding, TerminalTickets } from '../../../../../plugins/deploy/domain/terminal/terminal-tickets.ts';
import { createTestServer, type TestServer } from '../../../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const BINDING: TicketBinding = { userId: 1, app: 'shell', service: 'web', container: 'c0ffee', clientAddress: '127.0.0.1' };

describe('terminal tickets', () => {
    let context: TestServer;
    let time = Date.parse('2026-12-05T10:00:00Z');
    let tickets: TerminalTickets;

    before(async () => {
        context = await createTestServer();
        tickets = new TerminalTickets(context.server.app.knex, () => time);
    });

    after(async () => {
        await context?.cleanup();
    });

    it('gives what the ticket was issued for once, and keeps only its hash', async () => {
        const { ticket, expiresAt } = await tickets.issue(BINDING);
        expect(ticket).to.match(/^[A-Za-z0-9_-]{43}$/);
        expect(expiresAt).to.equal(time + TICKET_SECONDS * 1000);
        const stored = (await context.server.app.knex('dp_terminal_tickets').select()) as Array<Record<string, unknown>>;
        expect(JSON.stringify(stored)).to.not.contain(ticket);
        expect(stored).to.have.length(1);
        expect(String(stored[0]?.hash)).to.match(/^[0-9a-f]{64}$/);

        expect(await tickets.redeem(ticket)).to.equal(BINDING);
        expect(await tickets.redeem(ticket)).to.be.undefined();
    });

    it('refuses a ticket once its 30 seconds are over, and one it never issued', async () => {
        const { ticket } = await tickets.issue(BINDING);
        time += TICKET_SECONDS * 1000;
        expect(await tickets.redeem(ticket)).to.be.undefined();

        expect(await tickets.redeem('A'.repeat(43))).to.be.undefined();
        expect(await tickets.redeem('')).to.be.undefined();
        expect(await tickets.redeem('not a ticket')).to.be.undefined();
    });

    it('forgets lapsed tickets when it issues the next', async () => {
        await tickets.issue(BINDING);
        time += TICKET_SECONDS * 1000 + 1;
        await tickets.issue(BINDING);
        const left = await context.server.app.knex('dp_terminal_tickets').count({ count: '*' }).first();
        expect(Number(left?.count)).to.equal(1);
    });
});
