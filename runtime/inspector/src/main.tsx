import { render } from 'preact'
import { App } from './components/App'
import { connect } from './dev-channel'
import './styles.css'

connect()
render(<App />, document.getElementById('app')!)
