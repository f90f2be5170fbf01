import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { organizations } from '../../../../../plugins/git/domain/orgs/org-service.ts';
import type { UserRow } from '../../../../../plugins/git/domain/identity/user-service.ts';
import { createTestServer, createTestUser, type TestServer, type TestUser } from '../../../../helpers/server.ts';
import { swaggerErrors } from '../../../../helpers/swagger.ts';
import { giteaCaller, registerRunner, seedRuns } from '../../domain/actions/fixtures.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

describe('organization: actions runners, runs and jobs', () => {
    let context: TestServer;
    let admin: TestUser;
    let owner: TestUser;
    let member: TestUser;
    let outsider: TestUser;
    let org: UserRow;
    let globalRunnerId: number | undefined;

    before(async () => {
        context = await createTestServer();
        admin = await createTestUser(context.server, { name: 'root', admin: true });
        owner = await createTestUser(context.server, { name: 'olga' });
        member = await createTestUser(context.server, { name: 'mia' });
        outsider = await createTestUser(context.server, { name: 'otto' });
        org = await organizations(context.server).create(owner.user, { username: 'acme' }, owner.user);
        await context.database.knex('org_users').insert({ org_id: org.id, uid: member.user.id, is_public: false });
        await seedRuns(context.server, org, owner.user, 'public-app');
        await seedRuns(context.server, org, owner.user, 'secret-app', true);
    });

    after(async () => {
        await context.cleanup();
    });

    const request = async (method: string, url: string, headers: Record<string, string>, payload?: object) =>
        await context.server.inject({ method, url: `/api/v1${url}`, payload, headers });

    /** A runner that joins the organisation with a registration token its owner asks for. */
    const orgRunner = async (orgName: string, runnerName: string) => {
        const response = await request('POST', `/orgs/${orgName}/actions/runners/registration-token`, owner.headers);
        expect(response.statusCode).to.equal(200);
        return (await registerRunner(context.server, (response.result as { token: string }).token, runnerName)).id;
    };

    /** An organisation of olga's of its own, with one runner of its own. */
    const orgWithRunner = async (orgName: string, runnerName: string) => {
        await organizations(context.server).create(owner.user, { username: orgName }, owner.user);
        return await orgRunner(orgName, runnerName);
    };

    /** A runner of the whole instance, registered with the administrator's token when no test has yet. */
    const haveGlobalRunner = async () => {
        if (globalRunnerId === undefined) {
            const response = await request('POST', '/admin/actions/runners/registration-token', admin.headers);
            globalRunnerId = (await registerRunner(context.server, (response.result as { token: string }).token, 'global-runner')).id;
        }

        return globalRunnerId;
    };

    it('gives owners a registration token of the organisation, with which a runner joins the organisation', async () => {
        const response = await request('POST', '/orgs/acme/actions/runners/registration-token', owner.headers);
        expect(response.statusCode).to.equal(200);
        expect(swaggerErrors('orgCreateRunnerRegistrationToken', 200, response.result)).to.equal([]);
        const token = (response.result as { token: string }).token;
        const adminToken = (await request('POST', '/admin/actions/runners/registration-token', admin.headers)).result as { token: string };
        expect(adminToken.token).to.not.equal(token);
        const orgRunnerId = (await registerRunner(context.server, token, 'acme-runner')).id;
        const stored = await context.database.knex('action_runners').where({ id: orgRunnerId }).first('owner_id');
        expect(Number(stored.owner_id)).to.equal(org.id);
    });

    it('lists, gets, disables and deletes the organisation runners only', async () => {
        const orgRunnerId = await orgWithRunner('listed-org', 'listed-runner');
        const globalRunner = await haveGlobalRunner();
        const listed = await request('GET', '/orgs/listed-org/actions/runners', owner.headers);
        expect(listed.statusCode).to.equal(200);
        expect(swaggerErrors('getOrgRunners', 200, listed.result)).to.equal([]);
        expect(listed.result).to.include({ total_count: 1 });
        const got = await request('GET', `/orgs/listed-org/actions/runners/${orgRunnerId}`, owner.headers);
        expect(swaggerErrors('getOrgRunner', 200, got.result)).to.equal([]);
        const foreign = await request('GET', `/orgs/listed-org/actions/runners/${globalRunner}`, owner.headers);
        expect(foreign.statusCode).to.equal(404);
        expect((foreign.result as { message: string }).message).to.equal('No permission to access this runner');
        const edited = await request('PATCH', `/orgs/listed-org/actions/runners/${orgRunnerId}`, owner.headers, { disabled: true });
        expect(edited.statusCode).to.equal(200);
        expect(swaggerErrors('updateOrgRunner', 200, edited.result)).to.equal([]);
        expect((await request('GET', '/orgs/listed-org/actions/runners?disabled=false', owner.headers)).result).to.include({
            total_count: 0,
        });
        expect((await request('DELETE', `/orgs/listed-org/actions/runners/${globalRunner}`, owner.headers)).statusCode).to.equal(404);
        expect((await request('GET', '/orgs/listed-org/actions/runners/x1', owner.headers)).statusCode).to.equal(400);
    });

    it('keeps runners and tokens from members who are not owners, and 404s an unknown organisation', async () => {
        const orgRunnerId = await orgRunner('acme', 'guarded-runner');
        for (const [method, url] of [
            ['GET', '/orgs/acme/actions/runners'],
            ['POST', '/orgs/acme/actions/runners/registration-token'],
            ['GET', `/orgs/acme/actions/runners/${orgRunnerId}`],
            ['DELETE', `/orgs/acme/actions/runners/${orgRunnerId}`],
        ] as const) {
            const refused = await request(method, url, member.headers);
            expect(refused.statusCode).to.equal(403);
            expect((refused.result as { message: string }).message).to.equal('Must be an organization owner');
        }

        expect((await request('GET', `/orgs/acme/actions/runners/${orgRunnerId}`, owner.headers)).statusCode).to.equal(200);
        expect((await request('GET', '/orgs/nowhere/actions/runners', owner.headers)).statusCode).to.equal(404);
        expect((await request('GET', '/orgs/acme/actions/runners', admin.headers)).statusCode).to.equal(200);
    });

    it('shows members the runs and jobs of the repositories they can read', async () => {
        const ownerRuns = await request('GET', '/orgs/acme/actions/runs', owner.headers);
        expect(ownerRuns.statusCode).to.equal(200);
        expect(swaggerErrors('getOrgWorkflowRuns', 200, ownerRuns.result)).to.equal([]);
        expect(ownerRuns.headers['x-total-count']).to.equal('6');
        const memberRuns = await request('GET', '/orgs/acme/actions/runs?status=completed', member.headers);
        expect((memberRuns.result as { total_count: number }).total_count).to.equal(2);
        const jobs = await request('GET', '/orgs/acme/actions/jobs?limit=3', owner.headers);
        expect(jobs.statusCode).to.equal(200);
        expect(swaggerErrors('getOrgWorkflowJobs', 200, jobs.result)).to.equal([]);
        expect(jobs.headers['x-total-count']).to.equal('8');
        expect(jobs.headers.link).to.contain('rel="next"');
        expect(((await request('GET', '/orgs/acme/actions/jobs', member.headers)).result as { total_count: number }).total_count).to.equal(
            4,
        );
        const refused = await request('GET', '/orgs/acme/actions/runs', outsider.headers);
        expect(refused.statusCode).to.equal(403);
        expect((refused.result as { message: string }).message).to.equal('Must be an organization member');
        expect((await request('GET', '/orgs/acme/actions/jobs?status=bogus', owner.headers)).statusCode).to.equal(400);
    });

    it('needs the organization scope on tokens', async () => {
        const repoOnly = await createTestUser(context.server, { name: 'rita', scopes: ['read:repository'] });
        await context.database.knex('org_users').insert({ org_id: org.id, uid: repoOnly.user.id, is_public: false });
        expect((await request('GET', '/orgs/acme/actions/runs', repoOnly.headers)).statusCode).to.equal(403);
    });

    it('answers every organisation actions operation through the gitea-js client', async () => {
        const orgRunnerId = await orgWithRunner('client-org', 'client-runner');
        await context.server.start();
        const call = giteaCaller(context.server, owner.token);
        expect(
            ((await call('POST', '/orgs/client-org/actions/runners/registration-token')).data as { token: string }).token,
        ).to.have.length(40);
        expect(((await call('GET', '/orgs/client-org/actions/runners')).data as { total_count: number }).total_count).to.equal(1);
        expect(((await call('GET', `/orgs/client-org/actions/runners/${orgRunnerId}`)).data as { name: string }).name).to.equal(
            'client-runner',
        );
        await call('PATCH', `/orgs/client-org/actions/runners/${orgRunnerId}`, { disabled: true });
        expect(
            ((await call('PATCH', `/orgs/client-org/actions/runners/${orgRunnerId}`, { disabled: false })).data as { disabled: boolean })
                .disabled,
        ).to.be.false();
        expect((await call('DELETE', `/orgs/client-org/actions/runners/${orgRunnerId}`)).status).to.equal(204);
        expect(((await call('GET', '/orgs/client-org/actions/runners')).data as { total_count: number }).total_count).to.equal(0);
        expect(((await call('GET', '/orgs/acme/actions/runs')).data as { total_count: number }).total_count).to.equal(6);
        expect(((await call('GET', '/orgs/acme/actions/jobs')).data as { total_count: number }).total_count).to.equal(8);
    });
});
