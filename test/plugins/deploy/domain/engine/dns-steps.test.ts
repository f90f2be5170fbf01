import Crypto from 'node:crypto';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { loadDnsProvider } from '../../../../../plugins/deploy/domain/dns/dns-providers.ts';
import { setDnsRecord } from '../../../../../plugins/deploy/domain/engine/dns-steps.ts';
import { type AppRunData, RunContext } from '../../../../../plugins/deploy/domain/engine/run-context.ts';
import { undoFromJournal } from '../../../../../plugins/deploy/domain/engine/run-recovery.ts';
import { createTestServer, type TestServer } from '../../../../helpers/server.ts';
import { dnsEnvironment, type RunningBind, startBind } from '../../../../support/bind.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

/**
 * The DNS step of a run against a real BIND: a server killed after it pointed the app's name at this host is
 * undone from the run's journal by the server that takes the run over, as its own rollback would have.
 */
describe('deploy runs: a DNS record a killed run set is put back from its journal', () => {
    let bind: RunningBind;
    let test: TestServer;

    before(async () => {
        const started = await startBind();
        if (!started) throw new Error('BIND (Debian bind9) is needed for the DNS records of deployed apps');
        bind = started;
        test = await createTestServer(dnsEnvironment(bind));
    });

    after(async () => {
        await test?.cleanup();
        await bind?.stop();
    });

    const contextFor = (app: string) => {
        const data: AppRunData = { runId: Crypto.randomInt(1_000_000, 2_000_000_000), app, kind: 'deploy', domain: `${app}.apps.test` };
        return new RunContext(
            test.config,
            data,
            () => Promise.resolve(test.server.app.knex),
            () => undefined,
        );
    };
    const provider = async () => {
        const dns = await loadDnsProvider(test.config.host.dns);
        if (!dns) throw new Error('the test server manages DNS records');
        return dns;
    };
    const recorded = async (app: string) =>
        (await test.server.app.knex('dp_app_resources').where({ app_name: app, kind: 'dns' }).select('name')).map((row) =>
            String(row.name),
        );

    it('removes a record the run made, and forgets it as the app resource', async () => {
        const context = contextFor('fresh');
        await setDnsRecord(context);
        expect(await (await provider()).lookupAddress('fresh.apps.test')).to.equal(['127.0.0.1']);
        expect(await recorded('fresh')).to.equal(['fresh.apps.test']);

        const recovery = await undoFromJournal(context);
        expect(recovery).to.equal({ undone: ['removed the DNS record of fresh.apps.test'], failed: [] });
        expect(await (await provider()).lookupAddress('fresh.apps.test')).to.equal([]);
        expect(await recorded('fresh')).to.equal([]);
    });

    it('gives a name that had addresses before the run all of them back', async () => {
        const dns = await provider();
        await dns.setAddress('moved.apps.test', ['192.0.2.31', '192.0.2.32'], 60);
        const context = contextFor('moved');
        await setDnsRecord(context);
        expect(await dns.lookupAddress('moved.apps.test')).to.equal(['127.0.0.1']);

        const recovery = await undoFromJournal(context);
        expect(recovery.failed).to.equal([]);
        // In the order the server answered them, which BIND rotates.
        expect(recovery.undone).to.have.length(1);
        expect(recovery.undone[0]).to.match(
            /^pointed moved\.apps\.test back at (192\.0\.2\.31, 192\.0\.2\.32|192\.0\.2\.32, 192\.0\.2\.31)$/,
        );
        expect((await dns.lookupAddress('moved.apps.test')).sort()).to.equal(['192.0.2.31', '192.0.2.32']);
        await dns.removeAddress('moved.apps.test');
    });
});
