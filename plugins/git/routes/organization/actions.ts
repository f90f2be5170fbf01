import type { Lifecycle, Request } from '@hapi/hapi';

import { jobList, registrationToken, runList, runnerDelete, runnerEdit, runnerGet, runnerList } from '../shared/actions.ts';
import type { RunnerScope } from '../../domain/actions/runner-service.ts';
import type { RunScope } from '../../domain/actions/action-run-service.ts';
import { pathOrg, publicOnlyToken } from '../shared/access.ts';

/** Runners belong to owners of the organisation (and site administrators): their operations declare `org: owner`. */
function ownerScope(request: Request): RunnerScope {
    return { ownerId: pathOrg(request).org.id };
}

/**
 * Runs and jobs are for members (`org: member`); members who are not owners see those of public repositories only,
 * and so does a public-only token, whoever holds it.
 */
function memberScope(request: Request): RunScope {
    const { org, isOwner } = pathOrg(request);
    return { ownerId: org.id, publicOnly: !isOwner || publicOnlyToken(request) };
}

export const getOrgRunners: Lifecycle.Method = async (request) => await runnerList(request, ownerScope(request));

export const getOrgRunner: Lifecycle.Method = async (request) => await runnerGet(request, ownerScope(request));

export const updateOrgRunner: Lifecycle.Method = async (request) => await runnerEdit(request, ownerScope(request));

export const deleteOrgRunner: Lifecycle.Method = async (request, h) => await runnerDelete(request, h, ownerScope(request));

export const orgCreateRunnerRegistrationToken: Lifecycle.Method = async (request) => await registrationToken(request, ownerScope(request));

export const getOrgWorkflowRuns: Lifecycle.Method = async (request, h) => await runList(request, h, memberScope(request));

export const getOrgWorkflowJobs: Lifecycle.Method = async (request, h) => await jobList(request, h, memberScope(request));
