import type { Lifecycle } from '@hapi/hapi';

import { jobList, registrationToken, runList, runnerDelete, runnerEdit, runnerGet, runnerList } from '../shared/actions.ts';
import { INSTANCE_SCOPE } from '../../domain/actions/runner-service.ts';

// Administrators reach every runner, run and job; registration tokens they make are the instance's.
export const getAdminRunners: Lifecycle.Method = async (request) => await runnerList(request, undefined);

export const getAdminRunner: Lifecycle.Method = async (request) => await runnerGet(request, undefined);

export const updateAdminRunner: Lifecycle.Method = async (request) => await runnerEdit(request, undefined);

export const deleteAdminRunner: Lifecycle.Method = async (request, h) => await runnerDelete(request, h, undefined);

export const adminCreateRunnerRegistrationToken: Lifecycle.Method = async (request) => await registrationToken(request, INSTANCE_SCOPE);

export const listAdminWorkflowRuns: Lifecycle.Method = async (request, h) => await runList(request, h, undefined);

export const listAdminWorkflowJobs: Lifecycle.Method = async (request, h) => await jobList(request, h, undefined);
