import type { Lifecycle, Request } from '@hapi/hapi';

import { credentialsOf, signedInUser } from '../../domain/identity/auth.ts';
import { type CreateIssueInput, type EditIssueInput, issues, type RepositoryAccess } from '../../domain/issues/issue-service.ts';

async function repositoryOf(request: Request): Promise<RepositoryAccess> {
    return await issues(request.server).access(request.params.owner as string, request.params.repo as string, credentialsOf(request)?.user);
}

function indexOf(request: Request): number {
    return Number(request.params.index);
}

export const issueCreateIssue: Lifecycle.Method = async (request, h) => {
    const doer = signedInUser(request);
    const access = await repositoryOf(request);
    const service = issues(request.server);
    const issue = await service.create(access, (request.payload ?? {}) as CreateIssueInput, doer);
    return h.response(await service.apiIssue(access, issue, doer)).code(201);
};

export const issueGetIssue: Lifecycle.Method = async (request) => {
    const access = await repositoryOf(request);
    const service = issues(request.server);
    return await service.apiIssue(access, await service.get(access, indexOf(request)), credentialsOf(request)?.user);
};

/** Gitea answers an edit with 201. */
export const issueEditIssue: Lifecycle.Method = async (request, h) => {
    const doer = signedInUser(request);
    const access = await repositoryOf(request);
    const service = issues(request.server);
    const issue = await service.edit(access, indexOf(request), (request.payload ?? {}) as EditIssueInput, doer);
    return h.response(await service.apiIssue(access, issue, doer)).code(201);
};

export const issueCreateComment: Lifecycle.Method = async (request, h) => {
    const doer = signedInUser(request);
    const access = await repositoryOf(request);
    const service = issues(request.server);
    const { body } = (request.payload ?? {}) as { body?: string };
    const { comment, issue } = await service.comment(access, indexOf(request), body ?? '', doer);
    return h.response(await service.apiComment(access, issue, comment, doer)).code(201);
};
