import type { Lifecycle } from '@hapi/hapi';

import { overview } from '../../domain/overview/overview-service.ts';

export const getDashboard: Lifecycle.Method = async (request) => await overview(request.server).dashboard();

export const getSystem: Lifecycle.Method = async (request) => await overview(request.server).system();
