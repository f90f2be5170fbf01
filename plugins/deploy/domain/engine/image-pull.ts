/**
 * One image pulled through the engine, with its progress in the run's log (a line when a layer changes state,
 * download and extraction figures at most every few seconds, a line when nothing has come for a while) and a
 * time limit after which the pull is aborted.
 */
import type Docker from 'dockerode';

import type { HostConfig } from '../../../../lib/config.ts';
import { registryAuth } from '../host/docker-client.ts';
import type { Log } from './app-engine.ts';
import type { ProjectPlan } from './plan-model.ts';

interface PullEvent {
    status?: string;
    id?: string;
    error?: string;
    progressDetail?: { current?: number; total?: number };
}

export interface PullImagesOptions {
    /** How long one image's pull may take before it is aborted. */
    pullTimeoutMs: number;
}

export interface PullOptions {
    auth: Docker.AuthConfig | undefined;
    timeoutMs: number;
    log: Log;
}

/** Statuses repeated many times per layer: logged at most every PROGRESS_EVERY_MS. */
const REPEATING = new Set(['Downloading', 'Extracting']);
/** Steps of a layer too small to be worth a line. */
const QUIET = new Set(['Waiting', 'Verifying Checksum']);
const PROGRESS_EVERY_MS = 5_000;
const SILENCE_MS = 10_000;

export async function pullImage(docker: Docker, image: string, options: PullOptions): Promise<void> {
    const abort = new AbortController();
    const progress = new PullProgress(image, options.log);
    const seconds = options.timeoutMs / 1000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => {
            abort.abort();
            reject(new Error(`the pull did not finish within ${seconds} s (DEPLOY_PULL_TIMEOUT_SECONDS) and was aborted`));
        }, options.timeoutMs);
    });
    const silence = setInterval(() => progress.noteSilence(), SILENCE_MS / 2);
    try {
        await Promise.race([follow(docker, image, options.auth, abort.signal, progress), timeout]);
    } finally {
        clearTimeout(timer);
        clearInterval(silence);
    }
}

async function follow(docker: Docker, image: string, auth: Docker.AuthConfig | undefined, signal: AbortSignal, progress: PullProgress) {
    const stream = (await docker.pull(image, { ...(auth ? { authconfig: auth } : {}), abortSignal: signal })) as NodeJS.ReadableStream;
    await new Promise<void>((resolve, reject) => {
        docker.modem.followProgress(
            stream,
            (error: Error | null, events: PullEvent[]) => {
                const failure = error ?? events.find((event) => event.error);
                if (failure) {
                    reject(failure instanceof Error ? failure : new Error(String(failure.error)));
                } else {
                    resolve();
                }
            },
            (event: PullEvent) => progress.note(event),
        );
    });
}

class PullProgress {
    readonly #image: string;
    readonly #log: Log;
    readonly #layers = new Map<string, string>();
    readonly #started = Date.now();
    #lastProgress = 0;
    #lastLine = Date.now();

    constructor(image: string, log: Log) {
        this.#image = image;
        this.#log = log;
    }

    note(event: PullEvent): void {
        const status = event.status;
        if (!status || event.error || QUIET.has(status)) {
            return;
        }

        if (REPEATING.has(status)) {
            if (Date.now() - this.#lastProgress >= PROGRESS_EVERY_MS) {
                this.#lastProgress = Date.now();
                this.#line(`${status} layer ${event.id ?? '?'}${figures(event.progressDetail)}`);
            }

            return;
        }

        const key = event.id ?? status;
        if (this.#layers.get(key) !== status) {
            this.#layers.set(key, status);
            this.#line(event.id && !status.includes(event.id) ? `${status} (${event.id})` : status);
        }
    }

    /** Nothing came from the engine for a while: says so, so that a stalled pull is seen as one. */
    noteSilence(): void {
        if (Date.now() - this.#lastLine >= SILENCE_MS) {
            this.#line(`still waiting, ${Math.round((Date.now() - this.#started) / 1000)} s since the pull began`);
        }
    }

    #line(text: string): void {
        this.#lastLine = Date.now();
        this.#log(`Pulling ${this.#image}: ${text}`);
    }
}

function figures(detail: PullEvent['progressDetail']): string {
    if (!detail?.current) {
        return '';
    }

    const megabytes = (bytes: number) => `${(bytes / 1_000_000).toFixed(1)} MB`;
    return ` (${megabytes(detail.current)}${detail.total ? ` of ${megabytes(detail.total)}` : ''})`;
}

/** The plan's images, each once. */
export function imagesOf(plan: Pick<ProjectPlan, 'services'>): string[] {
    return [...new Set(plan.services.map((service) => service.image))];
}

/** Pulls each image (from its registry, with the configured credentials); an image only the engine has is used as it is. */
export async function pullImages(
    docker: Docker,
    host: HostConfig,
    log: Log,
    images: string[],
    options: PullImagesOptions,
): Promise<{ imageIds: Map<string, string>; pulled: string[] }> {
    const imageIds = new Map<string, string>();
    const pulled: string[] = [];
    for (const image of images) {
        const before = await imageId(docker, image);
        try {
            await pullImage(docker, image, { auth: registryAuth(host, image), timeoutMs: options.pullTimeoutMs, log });
            log(`Pulled ${image}`);
            if (before === undefined) {
                pulled.push(image);
            }
        } catch (error) {
            if (before === undefined) {
                throw new Error(`could not pull ${image}: ${(error as Error).message}`);
            }

            log(`Could not pull ${image} (${(error as Error).message.trim()}); using the image the engine has`, 'warning');
        }

        imageIds.set(image, (await imageId(docker, image)) as string);
    }

    return { imageIds, pulled };
}

/** The images as the engine has them, pulling only those it lacks: a restore puts back what ran, not a newer tag. */
export async function imagesAtHand(
    docker: Docker,
    host: HostConfig,
    log: Log,
    images: string[],
    options: PullImagesOptions,
): Promise<Map<string, string>> {
    const imageIds = new Map<string, string>();
    const missing: string[] = [];
    for (const image of images) {
        const id = await imageId(docker, image);
        if (id === undefined) missing.push(image);
        else imageIds.set(image, id);
    }

    for (const [image, id] of (await pullImages(docker, host, log, missing, options)).imageIds) imageIds.set(image, id);
    return imageIds;
}

async function imageId(docker: Docker, image: string): Promise<string | undefined> {
    try {
        return (await docker.getImage(image).inspect()).Id;
    } catch {
        return undefined;
    }
}
