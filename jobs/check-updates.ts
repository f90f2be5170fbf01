/** The daily tick of the update check: the server compares the deployed images with their registries (plugins/deploy/domain/updates/update-service.ts). */
import { done, post } from '../lib/worker.ts';

post({ due: true });
done();
