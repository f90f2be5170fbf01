import type { Lifecycle } from '@hapi/hapi';

import { overview } from '../../domain/overview/overview-service.ts';
import { requestSnapshot } from '../../security.ts';

export const getDashboard: Lifecycle.Method = async (request) => await overview(request.server).dashboard(requestSnapshot(request));

export const getSystem: Lifecycle.Method = async (request) => await overview(request.server).system();
