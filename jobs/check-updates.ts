/** The daily tick of the update check: the server compares the deployed images with their registries (plugins/deploy/domain/notifications/update-check.ts). */
import { done, post } from '../lib/worker.ts';

post({ due: true });
done();
