// `node --import readfile-utf8/register app.mjs`: the same as the CommonJS register.
import api from './lib/register.js'

api.register()
export const { register, unregister, isRegistered } = api
export default api
