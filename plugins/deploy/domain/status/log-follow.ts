/** Following an app's containers' logs live: each new line as the engine writes it, the app's secrets masked. */
import type { Server } from '@hapi/hapi';

import { apps } from '../apps/app-service.ts';
import { secretMask } from '../apps/secret-mask.ts';
import { type LogLine, LogLineReader } from '../host/docker-logs.ts';
import { type AppContainer, appContainers, callDocker } from './app-containers.ts';

export interface FollowedLine extends LogLine {
    service: string;
    container: string;
}

export interface FollowOptions {
    /** Lines of each container's past to start with (with `since`: at most this many of those after it). */
    tail: number;
    /** Only lines after this time (seconds since the epoch). */
    since?: number;
    /** Only this service's containers. */
    service?: string;
}

export interface FollowSink {
    line(line: FollowedLine): void;
    /** Every followed container's stream has ended (the containers stopped), or there was none to follow. */
    end(reason: string): void;
}

/**
 * Finds what to follow (an unknown app or an engine that does not answer throws here, before any answer is
 * started); `start` then follows it and answers what stops it (the client went).
 */
export async function prepareToFollow(
    server: Server,
    name: string,
    options: FollowOptions,
    revealSecrets: boolean,
): Promise<{ start(sink: FollowSink): Promise<() => void> }> {
    const app = await apps(server).require(name);
    const containers = (await appContainers(app.name)).filter((container) => !options.service || container.service === options.service);
    const mask = revealSecrets ? (text: string) => text : secretMask(await apps(server).knownSecretValues(app.name));
    return { start: (sink) => follow(containers, options, mask, sink) };
}

async function follow(
    containers: AppContainer[],
    options: FollowOptions,
    mask: (text: string) => string,
    sink: FollowSink,
): Promise<() => void> {
    if (containers.length === 0) {
        sink.end(options.service ? `the app has no container of the service ${options.service}` : 'no container of this app exists');
        return () => undefined;
    }

    const streams: NodeJS.ReadableStream[] = [];
    let open = containers.length;
    const ended = () => {
        open -= 1;
        if (open === 0) sink.end('the containers stopped');
    };
    for (const { service, name: container, inspect, handle } of containers) {
        const stream = await callDocker(() =>
            handle.logs({
                follow: true,
                stdout: true,
                stderr: true,
                timestamps: true,
                tail: options.tail,
                ...(options.since === undefined ? {} : { since: options.since }),
            }),
        );
        const reader = new LogLineReader(inspect.Config.Tty);
        const emit = (lines: LogLine[]) => lines.forEach((line) => sink.line({ service, container, ...line, text: mask(line.text) }));
        let done = false;
        const finish = () => {
            if (!done) {
                done = true;
                emit(reader.end());
                ended();
            }
        };
        stream.on('data', (chunk: Buffer) => emit(reader.push(chunk)));
        stream.once('end', finish);
        stream.once('error', finish);
        streams.push(stream);
    }

    return () => streams.forEach((stream) => (stream as NodeJS.ReadableStream & { destroy(): void }).destroy());
}
