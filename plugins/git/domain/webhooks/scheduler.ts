import type { Server } from '@hapi/hapi';

import { defineService } from '../../../../lib/services.ts';
import { Service } from '../../../../lib/service.ts';

export const DELIVERY_JOB = 'deliver-webhooks';
/** The sweep that picks up retries the worker did not wait for, and anything queued while it was busy. */
const SWEEP_INTERVAL_MS = 5_000;

/**
 * Runs the delivery worker (jobs/deliver-webhooks.ts) through Bree: at once when something is queued, and when
 * the sweep finds deliveries due. The sweep is one indexed query on the server's thread, because starting a
 * worker thread (TypeScript loader, database connection) costs far more CPU than asking whether one is needed.
 * One worker at a time; a kick while it runs makes it run again when it ends.
 */
export class DeliveryScheduler extends Service {
    #runAgain = false;
    #stopping = false;
    #sweep: NodeJS.Timeout | undefined;

    constructor(server: Server) {
        super(server);
    }

    async setUp(): Promise<void> {
        const jobs = this.server.app.jobs;
        await jobs.schedule({ name: DELIVERY_JOB });
        jobs.bree.on('worker deleted', (name: string) => {
            if (name === DELIVERY_JOB && this.#runAgain) {
                this.#runAgain = false;
                this.kick();
            }
        });
        // Deliveries left pending by a previous run of the server go out as soon as it starts (a worker only if there are).
        this.server.ext('onPostStart', () => {
            void this.#sweepDue();
            this.#sweep = setInterval(() => void this.#sweepDue(), SWEEP_INTERVAL_MS).unref();
        });
        // Before Bree stops its workers, so that a worker ending then does not start another.
        this.server.ext(
            'onPreStop',
            () => {
                this.#stopping = true;
                clearInterval(this.#sweep);
            },
            { before: ['jobs'] },
        );
    }

    async #sweepDue(): Promise<void> {
        try {
            const due = await this.server.app
                .knex('hook_tasks')
                .where({ is_delivered: false })
                .where('next_attempt_at', '<=', Date.now())
                .first('id');
            if (due) {
                this.kick();
            }
        } catch (error) {
            this.server.log(['error', 'webhooks'], error as Error);
        }
    }

    kick(): void {
        if (!this.server.info.started || this.#stopping) {
            return;
        }

        const bree = this.server.app.jobs.bree;
        if (bree.workers.has(DELIVERY_JOB)) {
            this.#runAgain = true;
            return;
        }

        bree.run(DELIVERY_JOB).catch((error: unknown) => this.server.log(['error', 'webhooks'], error as Error));
    }
}

export const deliveryScheduler = defineService<DeliveryScheduler>('webhook-delivery', (owner) => new DeliveryScheduler(owner));
