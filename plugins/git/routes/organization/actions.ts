import type { Lifecycle, Request } from '@hapi/hapi';

import { ForbiddenError } from '../../../../lib/errors.ts';
import { jobList, registrationToken, runList, runnerDelete, runnerEdit, runnerGet, runnerList } from '../shared/actions.ts';
import type { RunnerScope } from '../../domain/actions/runner-service.ts';
import type { RunScope } from '../../domain/actions/action-run-service.ts';
import { signedInUser } from '../../domain/identity/auth.ts';
import { organizations } from '../../domain/orgs/org-service.ts';

/** Runners belong to owners of the organisation (and site administrators). */
async function ownerScope(request: Request): Promise<RunnerScope> {
    const doer = signedInUser(request);
    const service = organizations(request.server);
    const org = await service.visible(request.params.org as string, doer);
    await service.requireOwner(org, doer);
    return { ownerId: org.id };
}

/** Runs and jobs are for members; members who are not owners see those of public repositories only. */
async function memberScope(request: Request): Promise<RunScope> {
    const doer = signedInUser(request);
    const service = organizations(request.server);
    const org = await service.visible(request.params.org as string, doer);
    const fullAccess = doer.is_admin || (await service.isOwner(org, doer));
    if (!fullAccess && !(await service.isMember(org, doer))) {
        throw new ForbiddenError('Must be an organization member');
    }

    return { ownerId: org.id, publicOnly: !fullAccess };
}

export const getOrgRunners: Lifecycle.Method = async (request) => await runnerList(request, await ownerScope(request));

export const getOrgRunner: Lifecycle.Method = async (request) => await runnerGet(request, await ownerScope(request));

export const updateOrgRunner: Lifecycle.Method = async (request) => await runnerEdit(request, await ownerScope(request));

export const deleteOrgRunner: Lifecycle.Method = async (request, h) => await runnerDelete(request, h, await ownerScope(request));

export const orgCreateRunnerRegistrationToken: Lifecycle.Method = async (request) =>
    await registrationToken(request, await ownerScope(request));

export const getOrgWorkflowRuns: Lifecycle.Method = async (request, h) => await runList(request, h, await memberScope(request));

export const getOrgWorkflowJobs: Lifecycle.Method = async (request, h) => await jobList(request, h, await memberScope(request));
