import type { Lifecycle } from '@hapi/hapi';

import { apps } from '../../domain/apps/app-service.ts';
import { runEventStream } from '../../domain/runs/event-stream.ts';
import { runs } from '../../domain/runs/run-service.ts';

interface RunParams {
    name?: string;
    id?: number;
}

async function runWithEvents(server: Parameters<typeof runs>[0], id: number, app?: string) {
    const run = await runs(server).get(id, app);
    return { run, events: await runs(server).eventsAfter(id, 0) };
}

export const listRuns: Lifecycle.Method = async (request) => {
    const { name } = request.params as RunParams;
    const app = await apps(request.server).require(String(name));
    return { runs: await runs(request.server).list(app.name) };
};

export const getAppRun: Lifecycle.Method = async (request) => {
    const { name, id } = request.params as RunParams;
    return await runWithEvents(request.server, Number(id), String(name));
};

export const streamAppRun: Lifecycle.Method = async (request, h) => {
    const { name, id } = request.params as RunParams;
    return await runEventStream(request, h, Number(id), String(name));
};

export const getRun: Lifecycle.Method = async (request) => await runWithEvents(request.server, Number((request.params as RunParams).id));

export const streamRun: Lifecycle.Method = async (request, h) => await runEventStream(request, h, Number((request.params as RunParams).id));
