/**
 * Administrators' terminals in apps' running containers (TERMINAL_ENABLED): a ticket asked for over the API, then a
 * WebSocket that runs a shell in the container, every session audited at its end (who, where, when, how long).
 */
import type Docker from 'dockerode';
import type WebSocket from 'ws';

import { toRfc3339 } from '../../../../lib/database.ts';
import { ForbiddenError, NotFoundError, ServiceError, ValidationError } from '../../../../lib/errors.ts';
import { Service } from '../../../../lib/service.ts';
import { defineService } from '../../../../lib/services.ts';
import { audit } from '../accounts/audit-service.ts';
import { type DeployUser, deployUsers } from '../accounts/user-service.ts';
import { apps } from '../apps/app-service.ts';
import { dockerClient } from '../host/docker-client.ts';
import { type AppContainer, appContainers, callDocker } from '../status/app-containers.ts';
import { type SessionSummary, TerminalSession } from './terminal-session.ts';
import { TerminalTickets } from './terminal-tickets.ts';

export const TERMINAL_OFF = 'the terminal is off: set TERMINAL_ENABLED=true to turn it on';

/** Where a ticket's WebSocket is opened, with `?ticket=`. */
export function terminalSocketPath(app: string): string {
    return `/api/apps/${encodeURIComponent(app)}/terminal/socket`;
}

/** A ticket that is unknown, used already or lapsed. */
export class TicketRefusedError extends ServiceError {
    constructor() {
        super('the ticket is unknown, used or expired: ask for a new one', 401);
    }
}

export interface TerminalState {
    enabled: boolean;
    idleSeconds: number;
    /** The services with a running container, which a terminal can open in (none while the terminal is off). */
    services: string[];
}

export interface TerminalTicket {
    ticket: string;
    path: string;
    service: string;
    container: string;
    expiresAt: string;
}

/** What a redeemed ticket opens: the container, and who for. */
export interface TerminalAdmission {
    app: string;
    service: string;
    container: Docker.Container;
    containerName: string;
    user: DeployUser;
    clientAddress: string;
}

function running(containers: AppContainer[]): AppContainer[] {
    return containers.filter((container) => container.inspect.State.Running);
}

export class TerminalService extends Service {
    /** The open sessions, each with its audit entry's writing, which follows its end. */
    readonly #sessions = new Map<TerminalSession, Promise<void>>();
    #ticketBook: TerminalTickets | undefined;

    get #config() {
        return this.server.app.config.terminal;
    }

    get #tickets(): TerminalTickets {
        this.#ticketBook ??= new TerminalTickets(this.knex);
        return this.#ticketBook;
    }

    /** Whether the terminal is on, and which of the app's services it can open in. */
    async state(name: string): Promise<TerminalState> {
        const app = await apps(this.server).require(name);
        const { enabled, idleSeconds } = this.#config;
        const services = enabled ? [...new Set(running(await appContainers(app.name)).map((container) => container.service))] : [];
        return { enabled, idleSeconds, services };
    }

    /** A ticket for a shell in the app's running container of `service` (which may be left out when it runs one). */
    async issue(name: string, service: string | undefined, user: DeployUser, clientAddress: string): Promise<TerminalTicket> {
        this.#requireEnabled();
        const app = await apps(this.server).require(name);
        const container = await this.#containerOf(app.name, service);
        const { ticket, expiresAt } = await this.#tickets.issue({
            userId: user.id,
            app: app.name,
            service: container.service,
            container: container.inspect.Id,
            clientAddress,
        });
        return {
            ticket,
            path: terminalSocketPath(app.name),
            service: container.service,
            container: container.name,
            expiresAt: new Date(expiresAt).toISOString(),
        };
    }

    /**
     * Takes the ticket (once) for the socket of app `name`: refused while the terminal is off (404), for a ticket that
     * is unknown, used or lapsed (401), for another app's or a user who is no longer an enabled administrator (403),
     * and when the container has stopped since (422).
     */
    async admit(name: string, ticket: string): Promise<TerminalAdmission> {
        this.#requireEnabled();
        const binding = await this.#tickets.redeem(ticket);
        if (!binding) {
            throw new TicketRefusedError();
        }

        if (binding.app !== name) {
            throw new ForbiddenError('the ticket is for another app');
        }

        const user = await deployUsers(this.server).byId(binding.userId);
        if (!user || user.disabled || user.role !== 'admin') {
            throw new ForbiddenError('only administrators open a terminal');
        }

        const container = dockerClient().getContainer(binding.container);
        // A container removed since is gone (404); an engine that does not answer is an error of its own.
        const inspect = await callDocker(() => container.inspect()).catch((error: unknown) => {
            if ((error as { statusCode?: number }).statusCode === 404) return undefined;
            throw error;
        });
        if (!inspect?.State.Running) {
            throw new ValidationError(`the container of ${binding.service} is no longer running`);
        }

        const containerName = inspect.Name.replace(/^\//, '');
        return { app: binding.app, service: binding.service, container, containerName, user, clientAddress: binding.clientAddress };
    }

    /** Runs the admitted session on the socket; once it ends, it is audited. */
    start(socket: WebSocket, admission: TerminalAdmission): void {
        const session = new TerminalSession(socket, {
            container: admission.container,
            idleSeconds: this.#config.idleSeconds,
            warn: (message) => this.server.log(['warn', 'terminal'], message),
        });
        const audited = session.finished.then(async (summary) => {
            await this.#audit(admission, summary).catch((error: unknown) => {
                this.server.log(['error', 'terminal'], `terminal: could not audit a session: ${(error as Error).message}`);
            });
            this.#sessions.delete(session);
        });
        this.#sessions.set(session, audited);
    }

    /** Ends every open session (the server is stopping): each is hung up and audited before this resolves. */
    async closeAll(reason: string): Promise<void> {
        const open = [...this.#sessions];
        await Promise.all(
            open.map(async ([session, audited]) => {
                await session.end('stopped', reason);
                await audited;
            }),
        );
    }

    async #audit(admission: TerminalAdmission, summary: SessionSummary): Promise<void> {
        await audit(this.server).record({
            actor: { id: admission.user.id, email: admission.user.email },
            action: 'terminal.session',
            target: admission.app,
            clientAddress: admission.clientAddress,
            details: {
                service: admission.service,
                container: admission.containerName,
                startedAt: toRfc3339(summary.startedAt),
                seconds: summary.seconds,
                ended: summary.ended,
            },
        });
    }

    #requireEnabled(): void {
        if (!this.#config.enabled) {
            throw new NotFoundError(TERMINAL_OFF);
        }
    }

    async #containerOf(app: string, service: string | undefined): Promise<AppContainer> {
        const candidates = running(await appContainers(app));
        if (service !== undefined) {
            const chosen = candidates.find((container) => container.service === service);
            if (!chosen) {
                throw new ValidationError(`${app} has no running container of the service ${service}`);
            }

            return chosen;
        }

        const services = [...new Set(candidates.map((container) => container.service))];
        if (services.length === 0) {
            throw new ValidationError(`${app} has no running container`);
        }

        if (services.length > 1) {
            throw new ValidationError(`${app} runs several services (${services.join(', ')}): choose one`);
        }

        return candidates[0] as AppContainer;
    }
}

export const terminals = defineService<TerminalService>('terminals', (owner) => new TerminalService(owner));
