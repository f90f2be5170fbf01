import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { TICKET_SECONDS, type TicketBinding, TerminalTickets } from '../../../../../plugins/deploy/domain/terminal/terminal-tickets.ts';
import { createTestServer, type TestServer } from '../../../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

/** A ticket's binding, for an app of the test's own: the tickets of the other tests share the table. */
const bindingFor = (app: string): TicketBinding => ({ userId: 1, app, service: 'web', container: 'c0ffee', clientAddress: '127.0.0.1' });

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
        const binding = bindingFor('shell-once');
        const { ticket, expiresAt } = await tickets.issue(binding);
        expect(ticket).to.match(/^[A-Za-z0-9_-]{43}$/);
        expect(expiresAt).to.equal(time + TICKET_SECONDS * 1000);
        const stored = (await context.server.app.knex('dp_terminal_tickets').select()) as Array<Record<string, unknown>>;
        expect(JSON.stringify(stored)).to.not.contain(ticket);
        const own = stored.filter((row) => row.app_name === binding.app);
        expect(own).to.have.length(1);
        expect(String(own[0]?.hash)).to.match(/^[0-9a-f]{64}$/);

        expect(await tickets.redeem(ticket)).to.equal(binding);
        expect(await tickets.redeem(ticket)).to.be.undefined();
    });

    it('refuses a ticket once its 30 seconds are over, and one it never issued', async () => {
        const { ticket } = await tickets.issue(bindingFor('shell-lapsed'));
        time += TICKET_SECONDS * 1000;
        expect(await tickets.redeem(ticket)).to.be.undefined();

        expect(await tickets.redeem('A'.repeat(43))).to.be.undefined();
        expect(await tickets.redeem('')).to.be.undefined();
        expect(await tickets.redeem('not a ticket')).to.be.undefined();
    });

    it('forgets lapsed tickets when it issues the next', async () => {
        const binding = bindingFor('shell-forgotten');
        await tickets.issue(binding);
        time += TICKET_SECONDS * 1000 + 1;
        await tickets.issue(binding);
        const left = await context.server.app.knex('dp_terminal_tickets').where({ app_name: binding.app }).count({ count: '*' }).first();
        expect(Number(left?.count)).to.equal(1);
    });
});
