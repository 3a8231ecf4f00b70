/** What the fixture's agents module (written to a temporary folder) imports from the repo. */
export { z } from 'zod';
