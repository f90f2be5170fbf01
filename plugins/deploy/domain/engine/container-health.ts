/**
 * What a container's inspection says about its readiness and its crashes. A container has a health check when the
 * compose file or its image declares one (the engine merges the two into the container's configuration, as
 * `docker compose up --wait` reads it); `test: ["NONE"]` (compose's `disable: true`) turns it off.
 */
import type Docker from 'dockerode';

import { isActiveHealthcheck } from '../host/docker-client.ts';

export function hasActiveHealthcheck(inspect: Docker.ContainerInspectInfo): boolean {
    return isActiveHealthcheck(inspect.Config.Healthcheck);
}

export interface Crash {
    restarted: boolean;
    /** Known when the container is down; a restarted container's last exit code is read from the engine's events. */
    exitCode: number | undefined;
}

/** The container exited, or restarted since `baselineRestarts` (its restart policy brought it back after an exit). */
export function crashOf(inspect: Docker.ContainerInspectInfo, baselineRestarts: number): Crash | undefined {
    const state = inspect.State;
    if (state.Restarting) {
        return { restarted: true, exitCode: state.ExitCode };
    }

    if (state.Status === 'exited' || state.Status === 'dead') {
        return { restarted: false, exitCode: state.ExitCode };
    }

    if (inspect.RestartCount > baselineRestarts) {
        return { restarted: true, exitCode: undefined };
    }

    return undefined;
}

interface DieEvent {
    Action?: string;
    Actor?: { Attributes?: Record<string, string> };
}

/** The exit code of the container's last `die` event since `sinceMs`, from the engine's event log. */
export async function lastExitCode(docker: Docker, containerId: string, sinceMs: number): Promise<number | undefined> {
    try {
        // Both bounds in the past (to the millisecond), so that the engine answers what it has and ends the stream.
        const stream = (await docker.getEvents({
            since: Math.floor(sinceMs / 1000),
            until: Date.now() / 1000,
            filters: { type: ['container'], container: [containerId], event: ['die'] },
        })) as NodeJS.ReadableStream;
        let text = '';
        for await (const chunk of stream) {
            text += chunk.toString();
        }

        const events = text
            .split('\n')
            .filter((line) => line.trim() !== '')
            .map((line) => JSON.parse(line) as DieEvent);
        const code = events.at(-1)?.Actor?.Attributes?.exitCode;
        return code === undefined ? undefined : Number(code);
    } catch {
        return undefined;
    }
}

export function describeCrash(crash: Crash, exitCode: number | undefined): string {
    const code = exitCode === undefined ? 'an unknown code' : `code ${exitCode}`;
    return crash.restarted ? `exited with ${code} and was restarted (it crashes)` : `exited with ${code}`;
}
