'use strict'
// `node -r readfile-utf8/register app.js`: fs.readFileSync, fs.readFile and
// fs.promises.readFile serve UTF-8 requests with readfile-utf8 (see lib/register.js).
const api = require('./lib/register')

api.register()
module.exports = api
