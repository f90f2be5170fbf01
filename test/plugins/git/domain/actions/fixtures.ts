/** Shared by the actions tests: runner protocol calls and workflow runs made through the run service. */
import type { Server } from '@hapi/hapi';

import { actionRuns } from '../../../../../plugins/git/domain/actions/action-run-service.ts';
import { STATUS } from '../../../../../plugins/git/domain/actions/status.ts';
import type { UserRow } from '../../../../../plugins/git/domain/identity/user-service.ts';
import { repositories } from '../../../../../plugins/git/domain/repositories/repository-service.ts';
import { giteaClient } from '../../../../helpers/git-client.ts';

export interface ProtocolAnswer {
    statusCode: number;
    body: Record<string, unknown>;
}

/** A Connect unary call with a JSON body, as a runner makes it. */
export async function callRunner(
    server: Server,
    procedure: string,
    message: object,
    headers: Record<string, string> = {},
): Promise<ProtocolAnswer> {
    const response = await server.inject({
        method: 'POST',
        url: `/api/actions/runner.v1.RunnerService/${procedure}`,
        headers: { 'content-type': 'application/json', 'connect-protocol-version': '1', ...headers },
        payload: JSON.stringify(message),
    });
    return { statusCode: response.statusCode, body: response.payload ? (JSON.parse(response.payload) as Record<string, unknown>) : {} };
}

export interface RegisteredRunner {
    id: number;
    uuid: string;
    token: string;
    headers: Record<string, string>;
}

export async function registerRunner(
    server: Server,
    token: string,
    name: string,
    labels: string[] = ['ubuntu-latest'],
): Promise<RegisteredRunner> {
    const answer = await callRunner(server, 'Register', { name, token, version: 'v0.2.11', labels });
    if (answer.statusCode !== 200) {
        throw new Error(`Register answered ${answer.statusCode}: ${JSON.stringify(answer.body)}`);
    }

    const runner = answer.body.runner as { id: string; uuid: string; token: string };
    return {
        id: Number(runner.id),
        uuid: runner.uuid,
        token: runner.token,
        headers: { 'x-runner-uuid': runner.uuid, 'x-runner-token': runner.token },
    };
}

/** A repository of `owner` with three runs: a push to main (success), a push to dev (running), a pull request (failure). */
export async function seedRuns(server: Server, owner: UserRow, doer: UserRow, repoName: string, isPrivate = false): Promise<number[]> {
    const repo = await repositories(server).create(owner, { name: repoName, private: isPrivate }, doer);
    const started = Date.now() - 60_000;
    const service = actionRuns(server);
    const step = (name: string, status: number) => ({ name, status, started, stopped: status === STATUS.running ? 0 : started + 1000 });
    return [
        await service.createRun({
            repo,
            workflowId: 'ci.yml',
            title: 'First push',
            event: 'push',
            ref: 'refs/heads/main',
            commitSha: 'a'.repeat(40),
            triggerUser: doer,
            jobs: [
                {
                    name: 'build',
                    runsOn: ['ubuntu-latest'],
                    status: STATUS.success,
                    started,
                    stopped: started + 5000,
                    steps: [step('checkout', STATUS.success)],
                },
            ],
        }),
        await service.createRun({
            repo,
            workflowId: 'ci.yml',
            title: 'Work in progress',
            event: 'push',
            ref: 'refs/heads/dev',
            commitSha: 'b'.repeat(40),
            triggerUser: doer,
            jobs: [
                {
                    name: 'build',
                    runsOn: ['ubuntu-latest'],
                    status: STATUS.running,
                    started,
                    steps: [step('checkout', STATUS.success), step('test', STATUS.running)],
                },
                { name: 'deploy', runsOn: ['ubuntu-latest'], status: STATUS.blocked },
            ],
        }),
        await service.createRun({
            repo,
            workflowId: 'lint.yml',
            title: 'Lint the pull request',
            event: 'pull_request',
            ref: 'refs/pull/1/head',
            commitSha: 'c'.repeat(40),
            triggerUser: owner,
            jobs: [{ name: 'lint', runsOn: ['ubuntu-latest'], status: STATUS.failure, started, stopped: started + 2000 }],
        }),
    ];
}

/**
 * Calls an operation gitea-js has no method for (it predates the actions API) through its generic request,
 * against a started server, with the token as a Bearer header.
 */
export function giteaCaller(server: Server, token: string) {
    const api = giteaClient(server, token);
    return async (method: string, path: string, body?: object) =>
        await api.request<unknown>({
            method,
            path,
            secure: true,
            body,
            type: body ? ('application/json' as never) : undefined,
            format: method === 'DELETE' ? undefined : 'json',
        });
}
