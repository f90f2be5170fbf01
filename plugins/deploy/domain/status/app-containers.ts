/** An app's containers, found as Docker Compose labels them: `com.docker.compose.project=<app name>`. */
import type Docker from 'dockerode';

import { ServiceError } from '../../../../lib/errors.ts';
import { LABEL } from '../host/compose-labels.ts';
import { dockerClient } from '../host/docker-client.ts';

/** The engine did not answer at all (socket missing, refused, not permitted), as opposed to answering with an error. */
export class DockerUnavailableError extends ServiceError {
    constructor(cause: string) {
        super(`the Docker engine is not reachable (${cause})`, 503);
    }
}

interface EngineError {
    statusCode?: number;
    code?: string;
    message?: string;
}

/** Engine answers (404, 409, ...) carry a status; anything without one means the engine was never reached. */
export function asDockerError(error: unknown): Error {
    const engineError = (error ?? {}) as EngineError;
    if (typeof engineError.statusCode === 'number') {
        return error as Error;
    }

    return new DockerUnavailableError(engineError.message || engineError.code || 'no answer');
}

export async function callDocker<T>(call: () => Promise<T>): Promise<T> {
    try {
        return await call();
    } catch (error) {
        throw asDockerError(error);
    }
}

/** A container removed between the listing and its inspection is simply gone. */
async function inspectIfPresent(handle: Docker.Container): Promise<Docker.ContainerInspectInfo | undefined> {
    try {
        return await callDocker(() => handle.inspect());
    } catch (error) {
        if ((error as EngineError).statusCode === 404) {
            return undefined;
        }

        throw error;
    }
}

export interface AppContainer {
    service: string;
    name: string;
    inspect: Docker.ContainerInspectInfo;
    handle: Docker.Container;
}

/** Every container of the app's Compose project, running or not, in service then name order. */
export async function appContainers(appName: string, docker: Docker = dockerClient()): Promise<AppContainer[]> {
    const listed = await callDocker(() => docker.listContainers({ all: true, filters: { label: [`${LABEL.project}=${appName}`] } }));
    const containers = await Promise.all(
        listed.map(async (summary): Promise<AppContainer | undefined> => {
            const handle = docker.getContainer(summary.Id);
            const inspect = await inspectIfPresent(handle);
            return inspect && { service: summary.Labels[LABEL.service] ?? '', name: inspect.Name.replace(/^\//, ''), inspect, handle };
        }),
    );
    return containers
        .filter((container) => container !== undefined)
        .sort((left, right) => left.service.localeCompare(right.service) || left.name.localeCompare(right.name));
}
