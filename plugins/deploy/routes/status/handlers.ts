import type { Lifecycle, Request, ResponseToolkit } from '@hapi/hapi';

import { openEventStream } from '../../../../lib/server-sent-events.ts';
import { DockerUnavailableError } from '../../domain/status/app-containers.ts';
import { prepareToFollow } from '../../domain/status/log-follow.ts';
import { appStatus } from '../../domain/status/status-service.ts';
import { mayReadSecrets } from '../../security.ts';

function appName(request: Request): string {
    return request.params.name as string;
}

/**
 * The error mapper hides the message of every 5xx; an unreachable engine is the one the person must be told
 * about plainly, so it is answered here as a 503 with its reason.
 */
async function answerUnlessDockerIsDown(h: ResponseToolkit, read: () => Promise<object>): Promise<Lifecycle.ReturnValue> {
    try {
        return await read();
    } catch (error) {
        if (error instanceof DockerUnavailableError) {
            return h.response({ error: error.message }).code(error.statusCode);
        }

        throw error;
    }
}

export const getAppStatus: Lifecycle.Method = async (request, h) =>
    await answerUnlessDockerIsDown(h, () => appStatus(request.server).status(appName(request)));

export const getAppLogs: Lifecycle.Method = async (request, h) =>
    await answerUnlessDockerIsDown(h, () =>
        appStatus(request.server).logs(appName(request), (request.query as { tail: number }).tail, mayReadSecrets(request)),
    );

/** Live logs as Server-Sent Events: a `line` event per line, an `end` event when the containers' streams end. */
export const streamAppLogs: Lifecycle.Method = async (request, h) =>
    await answerUnlessDockerIsDown(h, async () => {
        const query = request.query as { tail: number; since?: number; service?: string };
        const following = await prepareToFollow(request.server, appName(request), query, mayReadSecrets(request));
        let stop: () => void = () => undefined;
        const events = openEventStream(request, () => stop());
        stop = await following.start({
            line: (line) => events.send('line', line),
            end: (reason) => {
                events.send('end', { reason });
                events.close();
            },
        });
        if (events.closed) stop();
        return events.respond(h);
    });
